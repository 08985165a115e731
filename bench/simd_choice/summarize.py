#!/usr/bin/env python3
"""Turns the *_out.txt logs of run.sh into the markdown tables of docs/SIMD.md (per variant)."""
import re, sys, collections
FN = ["sin","cos","tan","exp","log","sqrt","atan2","pow","asin","acos","atan"]
def parse(path):
    acc = collections.defaultdict(dict); tim = collections.defaultdict(dict)
    for line in open(path):
        m = re.match(r'^(ACC|ACC-typ) (\S+) (\S+) (\S+) (\d+) \| (.*)', line)
        if m:
            kind, lib, fn, var, w, rest = m.groups()
            if rest.startswith('n/a'):
                acc[(kind, fn)][var] = None; continue
            nums = re.findall(r'[\d.]+', rest.split('first-vs-base')[0].split('worst-vs-libm')[0])
            # mism maxulp | mism nanmism >1 >4 maxulp | nd
            acc[(kind, fn)][var] = dict(w=int(w), bm=int(nums[0]), bu=float(nums[1]), lm=int(nums[2]),
                                        ln=int(nums[3]), l1=int(nums[4]), l4=int(nums[5]), lu=float(nums[6]), nd=int(nums[7]))
        m = re.match(r'^TIME (\S+) (\S+) (\S+) (\d+) ([\d.]+)', line)
        if m:
            lib, fn, var, w, t = m.groups(); tim[fn][var] = float(t)
    return acc, tim
def ulp(u):
    return "inf/NaN" if u > 1e6 else ("%d" % u)
def table(path, cols, title):
    acc, tim = parse(path)
    vars_ = [c[1] for c in cols]
    print(f"\n#### {title}\n")
    hdr = "| fn | bitwise across " + ", ".join(vars_) + " (typ / wide) | neighbour-dep (typ / wide) | max ulp vs libm (typ / wide) | glibc ns | " + " | ".join(f"{c[0]} ns" for c in cols) + " |"
    print(hdr); print("|" + "---|" * (hdr.count('|') - 1))
    for fn in FN:
        row = []
        t = acc.get(("ACC-typ", fn), {}); w = acc.get(("ACC", fn), {})
        if all(t.get(v) is None for v in vars_):
            print(f"| {fn} | not provided | | | {tim.get(fn,{}).get('glibc-scalar',0):.2f} |" + " — |" * len(cols)); continue
        def bw(d):
            ent = [d.get(v) for v in vars_ if d.get(v) is not None]
            base = ent[0]
            # compare all to the first listed variant: need pairwise; use bm relative to file base
            bms = [e['bm'] for e in ent]
            return "yes" if len(set(bms)) == 1 and bms[0] == 0 else "NO (" + "/".join(str(b) for b in bms) + ")"
        def nd(d): return str(max(d[v]['nd'] for v in vars_ if d.get(v)))
        def lu(d): return ulp(max(d[v]['lu'] for v in vars_ if d.get(v)))
        row = [fn, f"{bw(t)} / {bw(w)}", f"{nd(t)} / {nd(w)}", f"{lu(t)} / {lu(w)}", "%.2f" % tim[fn]['glibc-scalar']]
        for c in cols:
            row.append("%.2f" % tim[fn][c[1]] if c[1] in tim[fn] else "—")
        print("| " + " | ".join(row) + " |")
if __name__ == "__main__":
    table("xsimd_out.txt", [("W=1 xsimd::f(double)", "xsimd-scalar(double)"), ("W=2 sse2", "sse2"), ("W=4 avx2", "avx2(noFMAarch)"), ("W=4 fma3<avx2>", "fma3<avx2>"), ("W=8 avx512f", "avx512f")], "xsimd 8.1.0")
    table("hwy_out.txt", [("W=1 SCALAR", "SCALAR"), ("W=1 AVX3 CappedTag<1>", "AVX3-cap1"), ("W=2 SSE4", "SSE4"), ("W=4 AVX2", "AVX2"), ("W=8 AVX3", "AVX3")], "Highway 1.0.3")
    table("stdx_out.txt", [("W=1 scalar ABI", "scalar-abi"), ("W=2", "deduce<2>"), ("W=4", "deduce<4>"), ("W=8 native", "native(8)")], "GCC 12 std::experimental::simd")
    table("own_out.txt", [("W=1 SCALAR", "SCALAR"), ("W=1 AVX3 CappedTag<1>", "AVX3-cap1"), ("W=2 SSE4", "SSE4"), ("W=4 AVX2", "AVX2"), ("W=8 AVX3", "AVX3")], "Own prototype on Highway ops (no MulAdd)")
