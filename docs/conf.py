# docs/conf.py — the documentation site (Sphinx), built by `bash scripts/docs.sh` into build-docs/html.
#
# Why Sphinx: the C++ API comes from the headers through Doxygen's XML and Breathe, the Python API from
# the package's docstrings through autodoc, the pages stay Markdown (MyST) as they always were, and
# every piece is a maintained Debian 12 package (python3-sphinx, python3-myst-parser, python3-breathe,
# doxygen, furo), so the site builds where the project builds, with nothing from PyPI. The
# projects our users know (SUNDIALS, SciPy, PyDy, Exudyn) document themselves the same way.
#
# The references of the study file, the equations file, the command line and results.h5 are not
# written here: scripts/docs.sh generates them from the code's own tables into reference/_generated/
# before Sphinx runs (the tests in tests/docs keep the tables equal to what the code reads).
import os
import sys

from docutils import nodes

DOCS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DOCS)

project = "lockstep"
author = "the lockstep developers"
copyright = "the lockstep developers, BSD-3-Clause"
version = release = open(os.path.join(ROOT, "CMakeLists.txt")).read().split("VERSION", 1)[1].split()[0]

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
if os.environ.get("LOCKSTEP_DOXYGEN_XML"):
    extensions.append("breathe")
    breathe_projects = {"lockstep": os.environ["LOCKSTEP_DOXYGEN_XML"]}
    breathe_default_project = "lockstep"
    breathe_domain_by_extension = {"h": "c", "hpp": "cpp"}

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["gpu-runs", "**/_build", "reference/_generated/*"]
myst_enable_extensions = ["dollarmath", "amsmath", "deflist", "colon_fence"]
myst_heading_anchors = 4

html_theme = "furo"
html_title = f"lockstep {release}"
html_static_path = []
html_show_sourcelink = False

# The Python API: the package from python/, its compiled module from the build (scripts/docs.sh sets
# LOCKSTEP_PYTHONPATH to the build's python folder).
for path in reversed([os.path.join(ROOT, "python")] + os.environ.get("LOCKSTEP_PYTHONPATH", "").split(os.pathsep)):
    if path:
        sys.path.insert(0, path)
autodoc_member_order = "bysource"
autodoc_typehints = "description"

# Pages link to the repository's files (a header, an example study) by relative path, as they did
# before they were a site. A link to a file that exists becomes the file's path set in code, or a link
# into the repository's web view where LOCKSTEP_SOURCE_URL names one (".../blob/main"); a link to a
# file that does not exist stays a warning, which fails the build.
SOURCE_URL = os.environ.get("LOCKSTEP_SOURCE_URL", "").rstrip("/")


def repository_file(app, env, node, contnode):
    target = node.get("reftarget", "")
    if node.get("reftype") not in ("myst", "any") or "/" not in target:  # MyST makes a folder's link "any"
        return None
    path, _, anchor = target.partition("#")
    if not path or "://" in path:
        return None
    page_folder = os.path.dirname(env.doc2path(node["refdoc"]))
    absolute = os.path.normpath(os.path.join(page_folder, path))
    if not absolute.startswith(ROOT + os.sep) or not os.path.exists(absolute):
        return None
    relative = os.path.relpath(absolute, ROOT) + ("/" if os.path.isdir(absolute) else "")
    text = contnode.astext()
    if SOURCE_URL:
        link = nodes.reference("", "", internal=False, refuri=f"{SOURCE_URL}/{relative}" + (f"#{anchor}" if anchor else ""))
        link += contnode
        return link
    if text.strip("`") in (relative, relative.rstrip("/"), path):
        return nodes.literal(relative, relative)
    return nodes.inline("", "", contnode, nodes.Text(" ("), nodes.literal(relative, relative), nodes.Text(")"))


def setup(app):
    app.connect("missing-reference", repository_file)
