// host/io/results_h5.cpp — results.h5 through the HDF5 C API (layout: results_h5.hpp).
#include "host/io/results_h5.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "host/io/members_csv.hpp"

namespace lockstep::io {

namespace {

constexpr std::int64_t format_version = results_format_version;

// ---- RAII for hid_t --------------------------------------------------------------------------------
template <herr_t (*Close)(hid_t)>
class handle {
 public:
  handle() = default;
  explicit handle(hid_t id) : id_(id) {}
  ~handle() { reset(); }
  handle(handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  handle& operator=(handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports whether HDF5 succeeded (closing a dataset flushes its chunk cache, and a
  // file's close writes its metadata).
  bool close() {
    if (id_ < 0) return true;
    const herr_t r = Close(id_);
    id_ = H5I_INVALID_HID;
    return r >= 0;
  }
  void reset() {
    if (id_ >= 0) Close(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using file_handle = handle<H5Fclose>;
using group_handle = handle<H5Gclose>;
using dataset_handle = handle<H5Dclose>;
using space_handle = handle<H5Sclose>;
using type_handle = handle<H5Tclose>;
using plist_handle = handle<H5Pclose>;
using attribute_handle = handle<H5Aclose>;

// HDF5 prints its error stack to stderr by default. The writer reports errors itself (io_error), so it
// silences the printing while it works and restores whatever the process had before.
class error_printing_off {
 public:
  error_printing_off() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~error_printing_off() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }
  error_printing_off(const error_printing_off&) = delete;
  error_printing_off& operator=(const error_printing_off&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

// The reason HDF5 gives for its last failure: the system's message when a file-driver call failed
// (drivers, sec2 and ours, push "errno = 28, error message = 'No space left on device'"), otherwise
// the innermost description. Reads and clears the thread's error stack.
struct h5_reason {
  std::string text;
  int system_error = 0;
};

h5_reason current_h5_reason() {
  struct walk_state {
    std::vector<std::string> descriptions;  // innermost first
  } state;
  auto visit = [](unsigned, const H5E_error2_t* e, void* client) -> herr_t {
    auto* s = static_cast<walk_state*>(client);
    std::string d = e->desc != nullptr ? e->desc : "";
    if (e->func_name != nullptr) d = std::string(e->func_name) + "(): " + d;
    s->descriptions.push_back(std::move(d));
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, visit, &state);
  H5Eclear2(H5E_DEFAULT);

  h5_reason r;
  for (const auto& d : state.descriptions) {
    const auto at = d.find("errno = ");
    const auto msg = d.find("error message = '");
    if (msg != std::string::npos) {
      const auto begin = msg + std::strlen("error message = '");
      const auto end = d.find('\'', begin);
      r.text = d.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
      if (at != std::string::npos) r.system_error = std::atoi(d.c_str() + at + std::strlen("errno = "));
      return r;
    }
  }
  r.text = state.descriptions.empty() ? std::string("unknown HDF5 error") : "HDF5: " + state.descriptions.front();
  return r;
}

// ---- the file driver -------------------------------------------------------------------------------
// HDF5 1.10 does not survive a failed write. A flush that fails leaves its metadata cache in a state
// from which no later flush or close succeeds (1.10.8: "H5C_set_slist_enabled(): slist already
// enabled?"), and a file whose close failed stays in the library's ID table after being freed, so the
// library crashes when it closes it again at exit (HDFGroup/hdf5 PR #2291; h5py #914; measured here
// with Debian's 1.10.8 before this driver existed). On a full disk that would turn a
// clean "No space left on device" into a crash. So the writer does its file I/O through this small
// POSIX driver (pread/pwrite on the temporary, like HDF5's sec2): the first write or truncate that
// fails records errno in the writer's write_record, and from then on the driver drops writes while
// reporting success. HDF5 stays consistent and closes cleanly; the writer checks the record after
// every HDF5 call, throws io_error and never commits the (now incomplete) file. Reads and the file
// format are those of sec2, so the file is an ordinary HDF5 file.

struct write_record {
  int error = 0;  // errno of the first failed write, truncate or close; 0 while all is well
};

struct driver_info {
  write_record* record = nullptr;
};

struct posix_file {
  H5FD_t pub;  // first: HDF5 sees a posix_file* as an H5FD_t*
  int fd = -1;
  haddr_t eoa = 0, eof = 0;
  dev_t device = 0;
  ino_t inode = 0;
  write_record* record = nullptr;
};

// Largest address: what off_t can reach (as sec2).
constexpr haddr_t max_address = (haddr_t(1) << (8 * sizeof(off_t) - 1)) - 1;

posix_file* as_posix(H5FD_t* f) { return reinterpret_cast<posix_file*>(f); }
const posix_file* as_posix(const H5FD_t* f) { return reinterpret_cast<const posix_file*>(f); }

// Puts a driver error on HDF5's stack in sec2's words, so that current_h5_reason finds the errno.
void push_driver_error(const char* function, hid_t minor, const char* what, int err) {
  H5Epush2(H5E_DEFAULT, __FILE__, function, __LINE__, H5E_ERR_CLS, H5E_VFL, minor, "%s failed: errno = %d, error message = '%s'",
           what, err, std::strerror(err));
}

void record_failure(posix_file* f, int err) {
  if (f->record != nullptr && f->record->error == 0) f->record->error = err;
}

bool dropping(const posix_file* f) { return f->record != nullptr && f->record->error != 0; }

void* driver_info_get(H5FD_t* file) { return new driver_info{as_posix(file)->record}; }
void* driver_info_copy(const void* info) { return new driver_info(*static_cast<const driver_info*>(info)); }
herr_t driver_info_free(void* info) {
  delete static_cast<driver_info*>(info);
  return 0;
}

H5FD_t* driver_open(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  if (name == nullptr || *name == '\0' || maxaddr == 0 || maxaddr == HADDR_UNDEF || maxaddr > max_address) {
    push_driver_error("lockstep driver open", H5E_BADVALUE, "open (invalid arguments)", EINVAL);
    return nullptr;
  }
  int mode = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
  if (flags & H5F_ACC_TRUNC) mode |= O_TRUNC;
  if (flags & H5F_ACC_CREAT) mode |= O_CREAT;
  if (flags & H5F_ACC_EXCL) mode |= O_EXCL;
  const int fd = ::open(name, mode | O_CLOEXEC, 0666);
  if (fd < 0) {
    push_driver_error("lockstep driver open", H5E_CANTOPENFILE, "open", errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    push_driver_error("lockstep driver open", H5E_CANTOPENFILE, "fstat", err);
    return nullptr;
  }
  auto* f = new posix_file{};
  f->fd = fd;
  f->eof = static_cast<haddr_t>(st.st_size);
  f->device = st.st_dev;
  f->inode = st.st_ino;
  if (const auto* info = static_cast<const driver_info*>(H5Pget_driver_info(fapl)); info != nullptr) f->record = info->record;
  return &f->pub;
}

herr_t driver_close(H5FD_t* file) {
  posix_file* f = as_posix(file);
  // close(2) can report a write error deferred by the file system (NFS): record it, as for a write.
  if (::close(f->fd) != 0) record_failure(f, errno);
  delete f;
  return 0;
}

int driver_compare(const H5FD_t* a, const H5FD_t* b) {
  const posix_file* f = as_posix(a);
  const posix_file* g = as_posix(b);
  if (f->device != g->device) return f->device < g->device ? -1 : 1;
  if (f->inode != g->inode) return f->inode < g->inode ? -1 : 1;
  return 0;
}

herr_t driver_query(const H5FD_t*, unsigned long* flags) {
  // sec2's features: metadata aggregation and accumulation, data sieving, small-data aggregation;
  // the files are those the default driver writes.
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE | H5FD_FEAT_AGGREGATE_SMALLDATA;
#ifdef H5FD_FEAT_DEFAULT_VFD_COMPATIBLE
  *flags |= H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
#endif
  return 0;
}

haddr_t driver_get_eoa(const H5FD_t* file, H5FD_mem_t) { return as_posix(file)->eoa; }
herr_t driver_set_eoa(H5FD_t* file, H5FD_mem_t, haddr_t address) {
  as_posix(file)->eoa = address;
  return 0;
}
haddr_t driver_get_eof(const H5FD_t* file, H5FD_mem_t) { return as_posix(file)->eof; }

herr_t driver_get_handle(H5FD_t* file, hid_t, void** handle) {
  *handle = &as_posix(file)->fd;
  return 0;
}

herr_t driver_read(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t address, size_t size, void* buffer) {
  posix_file* f = as_posix(file);
  if (address == HADDR_UNDEF || address > max_address || size > max_address - address) {
    push_driver_error("lockstep driver read", H5E_OVERFLOW, "read (address out of range)", EINVAL);
    return -1;
  }
  auto* out = static_cast<unsigned char*>(buffer);
  auto offset = static_cast<off_t>(address);
  while (size > 0) {
    const ssize_t got = ::pread(f->fd, out, size, offset);
    if (got < 0) {
      if (errno == EINTR) continue;
      push_driver_error("lockstep driver read", H5E_READERROR, "read", errno);
      return -1;
    }
    if (got == 0) {  // beyond the end of the file: zeros, as HDF5 expects
      std::memset(out, 0, size);
      break;
    }
    out += got;
    offset += got;
    size -= static_cast<size_t>(got);
  }
  return 0;
}

herr_t driver_write(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t address, size_t size, const void* buffer) {
  posix_file* f = as_posix(file);
  if (address == HADDR_UNDEF || address > max_address || size > max_address - address) {
    push_driver_error("lockstep driver write", H5E_OVERFLOW, "write (address out of range)", EINVAL);
    return -1;
  }
  const haddr_t end = address + size;
  const auto* in = static_cast<const unsigned char*>(buffer);
  auto offset = static_cast<off_t>(address);
  while (size > 0 && !dropping(f)) {
    const ssize_t put = ::pwrite(f->fd, in, size, offset);
    if (put < 0) {
      if (errno == EINTR) continue;
      record_failure(f, errno);
      break;
    }
    in += put;
    offset += put;
    size -= static_cast<size_t>(put);
  }
  // Dropped bytes count as written: HDF5's view of the file stays consistent (it is never committed).
  f->eof = std::max(f->eof, end);
  return 0;
}

herr_t driver_truncate(H5FD_t* file, hid_t, hbool_t) {
  posix_file* f = as_posix(file);
  if (f->eoa != f->eof) {
    if (!dropping(f) && ::ftruncate(f->fd, static_cast<off_t>(f->eoa)) != 0) record_failure(f, errno);
    f->eof = f->eoa;
  }
  return 0;
}

H5FD_class_t make_driver_class() {
  H5FD_class_t c{};  // members assigned by name: the struct grew between HDF5 1.10 and 1.14
#if H5_VERSION_GE(1, 13, 2)
  c.version = H5FD_CLASS_VERSION;
  c.value = static_cast<H5FD_class_value_t>(H5_VFD_RESERVED + 0x4c53);  // a user-defined value ("LS")
#endif
  c.name = "lockstep_posix";
  c.maxaddr = max_address;
  c.fc_degree = H5F_CLOSE_WEAK;
  c.fapl_size = sizeof(driver_info);
  c.fapl_get = driver_info_get;
  c.fapl_copy = driver_info_copy;
  c.fapl_free = driver_info_free;
  c.open = driver_open;
  c.close = driver_close;
  c.cmp = driver_compare;
  c.query = driver_query;
  c.get_eoa = driver_get_eoa;
  c.set_eoa = driver_set_eoa;
  c.get_eof = driver_get_eof;
  c.get_handle = driver_get_handle;
  c.read = driver_read;
  c.write = driver_write;
  c.truncate = driver_truncate;
  const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
  std::copy(std::begin(map), std::end(map), std::begin(c.fl_map));
  return c;
}

// The driver's id, registered on first use (and again if the library was closed and reopened).
hid_t driver_id() {
  static const H5FD_class_t driver_class = make_driver_class();
  static hid_t id = H5I_INVALID_HID;
  if (id < 0 || H5Iis_valid(id) <= 0) id = H5FDregister(&driver_class);
  return id;
}

hsize_t hs(long x) { return static_cast<hsize_t>(x); }

// Chunks of about this many bytes: large enough for deflate to work well and for few chunk-index
// entries at 10^6 members, small enough that a cache of a few chunks per dataset stays modest.
constexpr std::size_t target_chunk_bytes = 512 * 1024;
// Per dataset, room for a few chunks: blocks arriving in order complete a chunk left partial by the
// previous block while it is still cached; tens of datasets stay within tens of MB.
constexpr std::size_t chunks_in_cache = 4;
constexpr std::size_t min_chunk_cache_bytes = 1024 * 1024;

// A chunk shape for a dataset written in member ranges: trailing dimensions whole when they fit, and
// as many members as make about target_chunk_bytes. Returns an empty vector when the dataset is empty
// (HDF5 cannot chunk a zero-length dimension; such a dataset is stored contiguously and never written).
std::vector<hsize_t> chunk_shape(const std::vector<hsize_t>& dims, std::size_t element_bytes) {
  for (hsize_t d : dims)
    if (d == 0) return {};
  std::vector<hsize_t> chunk(dims);
  std::size_t bytes = element_bytes;
  for (std::size_t i = dims.size(); i-- > 1;) {
    const std::size_t room = std::max<std::size_t>(1, target_chunk_bytes / bytes);
    chunk[i] = std::min<hsize_t>(dims[i], room);
    bytes *= chunk[i];
  }
  chunk[0] = std::min<hsize_t>(dims[0], std::max<std::size_t>(1, target_chunk_bytes / bytes));
  return chunk;
}

}  // namespace

struct results_writer::impl {
  results_layout layout;
  output_file file_name;  // the temporary and the rename; HDF5 does the I/O
  write_record record;    // where the driver records a failed write; declared before the file it serves
  file_handle file;
  group_handle members_group;
  group_handle statistics_group;
  std::map<std::string, dataset_handle, std::less<>> datasets;  // by path, open for the writer's life
  std::vector<std::pair<long, long>> written;                   // member ranges [first, last)
  bool broken = false;

  impl(std::filesystem::path final_path, results_layout l)
      : layout(std::move(l)), file_name(std::move(final_path), "results file") {}
  ~impl() {
    // An uncommitted file is abandoned: close everything (errors ignored and unprinted) before
    // output_file's destructor removes the temporary. The driver never fails a write, so the closes
    // succeed even on a full disk.
    error_printing_off quiet;
    datasets.clear();
    members_group.reset();
    statistics_group.reset();
    file.reset();
    H5Eclear2(H5E_DEFAULT);
  }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  // Throws io_error when the driver recorded a failed write (see the driver's banner).
  void check_record(std::string_view doing) {
    if (record.error == 0) return;
    broken = true;
    file_name.fail("write", record.error, std::string(doing) + ": " + std::strerror(record.error));
  }

  // Throws io_error for the HDF5 failure that just happened while doing `doing`.
  [[noreturn]] void fail_h5(std::string_view doing) {
    check_record(doing);  // a dropped write explains later failures best
    broken = true;
    const h5_reason r = current_h5_reason();
    file_name.fail("write", r.system_error, std::string(doing) + ": " + r.text);
  }
  // Every HDF5 call goes through check: its own failure, or a write the driver dropped meanwhile.
  template <class H>
  H check(H h, std::string_view doing) {
    if (!h.valid()) fail_h5(doing);
    check_record(doing);
    return h;
  }
  void check(herr_t r, std::string_view doing) {
    if (r < 0) fail_h5(doing);
    check_record(doing);
  }
  void charge(std::size_t bytes) {
    try {
      charge_write(file_name.final_path(), bytes);
    } catch (const io_error& e) {
      broken = true;
      file_name.fail("write", e.system_error, std::string(std::strerror(e.system_error)) + " (injected by lockstep::io::fault_injection)");
    }
  }
  void usable() {
    if (broken) throw std::logic_error("results_writer: an earlier write to " + file_name.final_path().string() + " failed");
    if (file_name.committed()) throw std::logic_error("results_writer: " + file_name.final_path().string() + " is already committed");
  }

  // ---- attributes (replacing an existing one of the same name) ----
  type_handle utf8_string_type() {
    type_handle t = check(type_handle(H5Tcopy(H5T_C_S1)), "string type");
    check(H5Tset_size(t.get(), H5T_VARIABLE), "string type");
    check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "string type");
    return t;
  }
  void write_attribute(hid_t object, std::string_view name, hid_t file_type, hid_t memory_type,
                       const std::vector<hsize_t>& dims, const void* data, std::size_t bytes) {
    const std::string n(name);
    charge(bytes);
    const std::string doing = "attribute " + n;
    const htri_t exists = H5Aexists(object, n.c_str());
    check(static_cast<herr_t>(exists), doing);
    if (exists > 0) check(H5Adelete(object, n.c_str()), doing);
    space_handle space = check(space_handle(dims.empty() ? H5Screate(H5S_SCALAR)
                                                          : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr)),
                               doing);
    attribute_handle a = check(attribute_handle(H5Acreate2(object, n.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT)), doing);
    hsize_t elements = 1;
    for (hsize_t d : dims) elements *= d;
    if (elements > 0) check(H5Awrite(a.get(), memory_type, data), doing);
    if (!a.close()) fail_h5(doing);
  }
  void string_attribute(hid_t object, std::string_view name, std::string_view value) {
    const std::string v(value);
    const char* p = v.c_str();
    type_handle t = utf8_string_type();
    write_attribute(object, name, t.get(), t.get(), {}, &p, v.size());
  }
  void strings_attribute(hid_t object, std::string_view name, const std::vector<std::string>& values) {
    std::vector<const char*> p;
    std::size_t bytes = 0;
    for (const auto& s : values) {
      p.push_back(s.c_str());
      bytes += s.size();
    }
    type_handle t = utf8_string_type();
    write_attribute(object, name, t.get(), t.get(), {values.size()}, p.data(), bytes);
  }
  void double_attribute(hid_t object, std::string_view name, double value) {
    write_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {}, &value, sizeof value);
  }
  void int64_attribute(hid_t object, std::string_view name, std::int64_t value) {
    write_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, {}, &value, sizeof value);
  }
  template <class T>
  void array_attribute(hid_t object, std::string_view name, hid_t file_type, hid_t memory_type, const std::vector<T>& values) {
    write_attribute(object, name, file_type, memory_type, {values.size()}, values.data(), values.size() * sizeof(T));
  }

  // ---- datasets ----
  // A dataset of `dims` (first axis: members when chunked_by_member), kept open in `datasets`.
  void create_dataset(hid_t parent, const std::string& path, const std::string& name, hid_t file_type,
                      std::size_t element_bytes, const std::vector<hsize_t>& dims, bool chunked_by_member,
                      const void* fill) {
    const std::string doing = "create " + path;
    space_handle space = check(space_handle(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr)), doing);
    plist_handle dcpl = check(plist_handle(H5Pcreate(H5P_DATASET_CREATE)), doing);
    plist_handle dapl = check(plist_handle(H5Pcreate(H5P_DATASET_ACCESS)), doing);
    const std::vector<hsize_t> chunk = chunked_by_member ? chunk_shape(dims, element_bytes) : std::vector<hsize_t>{};
    if (!chunk.empty()) {
      check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), doing);
      if (layout.gzip_level > 0) {
        check(H5Pset_shuffle(dcpl.get()), doing);
        check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(layout.gzip_level)), doing);
      }
      // Member ranges need not align with chunks: a chunk partly written by one block stays in the
      // cache until the next block completes it, instead of being deflated, written, read back and
      // inflated. w0 = 1 evicts fully written chunks first.
      std::size_t chunk_bytes = element_bytes;
      for (hsize_t x : chunk) chunk_bytes *= x;
      check(H5Pset_chunk_cache(dapl.get(), 521, std::max(min_chunk_cache_bytes, chunks_in_cache * chunk_bytes), 1.0), doing);
    }
    if (fill != nullptr) check(H5Pset_fill_value(dcpl.get(), file_type, fill), doing);
    dataset_handle d = check(dataset_handle(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(), dapl.get())), doing);
    datasets.emplace(path, std::move(d));
  }

  hid_t dataset(const std::string& path) { return datasets.at(path).get(); }

  // Writes rows [first, first + count) of a dataset [N, inner..., width] from a member-major memory
  // array [count, inner..., stride] starting at column `offset` (HDF5 gathers the columns: no copy).
  void write_rows(const std::string& path, hid_t memory_type, std::size_t element_bytes, long first, long count,
                  const std::vector<hsize_t>& inner, hsize_t width, hsize_t stride, hsize_t offset, const void* data) {
    hsize_t elements = hs(count) * width;
    for (hsize_t d : inner) elements *= d;
    if (elements == 0) return;
    charge(elements * element_bytes);
    const std::string doing = "write " + path;
    const hid_t d = dataset(path);
    const int rank = static_cast<int>(inner.size()) + 2;
    std::vector<hsize_t> memory_dims{hs(count)}, start(static_cast<std::size_t>(rank), 0), block{hs(count)};
    memory_dims.insert(memory_dims.end(), inner.begin(), inner.end());
    memory_dims.push_back(stride);
    block.insert(block.end(), inner.begin(), inner.end());
    block.push_back(width);
    space_handle memory_space = check(space_handle(H5Screate_simple(rank, memory_dims.data(), nullptr)), doing);
    start.back() = offset;
    check(H5Sselect_hyperslab(memory_space.get(), H5S_SELECT_SET, start.data(), nullptr, block.data(), nullptr), doing);
    space_handle file_space = check(space_handle(H5Dget_space(d)), doing);
    // A one-column dataset ([N]) has no column axis in the file.
    if (H5Sget_simple_extent_ndims(file_space.get()) == rank - 1) {
      start.pop_back();
      block.pop_back();
    }
    std::fill(start.begin(), start.end(), 0);
    start.front() = hs(first);
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, block.data(), nullptr), doing);
    check(H5Dwrite(d, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data), doing);
  }

  // A one-dimensional member dataset [N] from `count` values.
  template <class T>
  void write_column(const std::string& path, hid_t memory_type, long first, const std::vector<T>& values) {
    write_rows(path, memory_type, sizeof(T), first, static_cast<long>(values.size()), {}, 1, 1, 0, values.data());
  }

  // A small dataset written whole (statistics, /t).
  // The root's group `name`, which the writer creates once (a second time is std::logic_error).
  group_handle new_root_group(const char* name) {
    const std::string path = std::string("/") + name;
    const htri_t exists = H5Lexists(file.get(), name, H5P_DEFAULT);
    check(static_cast<herr_t>(exists), "look up " + path);
    if (exists > 0) throw std::logic_error("results_writer: " + path + " was already written");
    return check(group_handle(H5Gcreate2(file.get(), name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), "create " + path);
  }

  void write_whole(hid_t parent, const std::string& path, const std::string& name, hid_t file_type, hid_t memory_type,
                   std::size_t element_bytes, const std::vector<hsize_t>& dims, const void* data) {
    hsize_t elements = 1;
    for (hsize_t d : dims) elements *= d;
    charge(elements * element_bytes);
    const std::string doing = "write " + path;
    space_handle space = check(space_handle(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr)), doing);
    dataset_handle d = check(dataset_handle(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), doing);
    if (elements > 0) check(H5Dwrite(d.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), doing);
    if (!d.close()) fail_h5(doing);
  }

  // A group `name` of `parent` (at `path`) holding an array in the state layout, [outer][Y][per], as its
  // parts q, v, lambda (mu, nu where the layout has them), each [outer][width][per]; the leading
  // dimension is left out where `outer_dimension` is false (outer = 1). With `values`, the array is in
  // the value order, [outer][Y + Z][per], and its quantities are a part too.
  void write_state_parts(hid_t parent, const std::string& path, const char* name, const double* data, std::size_t outer,
                         std::size_t per, bool outer_dimension, bool values = false) {
    group_handle g = check(group_handle(H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), "create " + path);
    const std::size_t Y = static_cast<std::size_t>(values ? layout.value_size() : layout.state_size());
    const std::size_t n = static_cast<std::size_t>(layout.n), m = static_cast<std::size_t>(layout.m),
                      k = static_cast<std::size_t>(layout.k);
    auto part = [&](const char* part_name, std::size_t offset, std::size_t width) {
      std::vector<double> out(outer * width * per);
      for (std::size_t s = 0; s < outer; ++s)
        for (std::size_t j = 0; j < width; ++j)
          for (std::size_t i = 0; i < per; ++i) out[(s * width + j) * per + i] = data[(s * Y + offset + j) * per + i];
      std::vector<hsize_t> dims{hs(static_cast<long>(width)), hs(static_cast<long>(per))};
      if (outer_dimension) dims.insert(dims.begin(), hs(static_cast<long>(outer)));
      write_whole(g.get(), path + "/" + part_name, part_name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double), dims,
                  out.data());
    };
    part("q", 0, n);
    part("v", n, n);
    part("lambda", 2 * n, m);
    if (layout.has_mu) part("mu", 2 * n + m, m);
    if (layout.has_nu) part("nu", 2 * n + 2 * m, k);
    if (values && layout.quantity_count() > 0)
      part("quantities", static_cast<std::size_t>(layout.state_size()),
           static_cast<std::size_t>(layout.quantity_count()));
    if (!g.close()) fail_h5("close " + path);
  }

  void record_written(long first, long count) {
    if (count > 0) written.emplace_back(first, first + count);
  }
  // The first member never written, if any.
  std::optional<std::pair<long, long>> first_gap() {
    std::sort(written.begin(), written.end());
    long covered = 0;
    std::vector<std::pair<long, long>> merged;
    for (const auto& [a, b] : written) {
      if (a > covered) return std::make_pair(covered, a);
      covered = std::max(covered, b);
      if (!merged.empty() && a <= merged.back().second)
        merged.back().second = std::max(merged.back().second, b);
      else
        merged.emplace_back(a, b);
    }
    written = std::move(merged);
    if (covered < layout.members) return std::make_pair(covered, layout.members);
    return std::nullopt;
  }
};

namespace {

void validate(const results_layout& l) {
  auto bad = [](const std::string& why) { throw std::invalid_argument("results_writer: " + why); };
  if (l.members < 0) bad("members must be non-negative");
  if (l.n < 0 || l.m < 0 || l.k < 0) bad("model sizes must be non-negative");
  if (l.has_nu && l.k == 0) bad("has_nu needs k > 0");
  if (l.grid_dims.size() != l.grid_shape.size()) bad("grid_dims and grid_shape must have the same length");
  if (l.gzip_level < 0 || l.gzip_level > 9) bad("gzip_level must be 0-9");
  if (l.lyapunov.exponents < 0 || l.lyapunov.history < 0) bad("lyapunov exponents and history must be non-negative");
  long points = 1;
  std::vector<bool> seen(l.varied_names.size(), false);
  for (std::size_t g = 0; g < l.grid_dims.size(); ++g) {
    const int d = l.grid_dims[g];
    if (d < 0 || static_cast<std::size_t>(d) >= l.varied_names.size()) bad("grid_dims names a varied input that does not exist");
    if (seen[static_cast<std::size_t>(d)]) bad("grid_dims lists a dimension twice");
    seen[static_cast<std::size_t>(d)] = true;
    if (l.grid_shape[g] <= 0) bad("grid_shape entries must be positive");
    points *= l.grid_shape[g];
  }
  // Members are numbered with the grid point fastest (study/sampling_plan.hpp).
  if (l.members % points != 0) bad("members must be a multiple of the number of grid points");
  for (const auto& s : l.varied_names)
    if (s.empty()) bad("varied input names must not be empty");
}

void validate_statistic_name(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos)
    throw std::invalid_argument("results_writer: statistic name '" + std::string(name) + "' is not a single path component");
}

}  // namespace

results_writer::results_writer(std::filesystem::path final_path, results_layout layout) {
  validate(layout);
  error_printing_off quiet;
  impl_ = std::make_unique<impl>(std::move(final_path), std::move(layout));
  impl& w = *impl_;
  const results_layout& l = w.layout;
  // HDF5 opens the temporary by name; output_file only reserved it (O_EXCL) and will rename it.
  w.file_name.release();

  plist_handle fapl = w.check(plist_handle(H5Pcreate(H5P_FILE_ACCESS)), "file access properties");
  w.check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), "file access properties");
  // Closing the file closes every object still open in it, so an abandoned writer leaks nothing.
  w.check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "file access properties");
  const driver_info info{&w.record};
  const hid_t driver = driver_id();
  if (driver < 0) w.fail_h5("register the file driver");
  w.check(H5Pset_driver(fapl.get(), driver, &info), "file access properties");
  w.file = file_handle(H5Fcreate(w.file_name.temporary_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
  if (!w.file.valid()) {
    w.broken = true;
    const h5_reason r = current_h5_reason();
    w.file_name.fail("create", r.system_error, r.text);
  }
  const hid_t root = w.file.get();

  w.string_attribute(root, "format", results_format);
  w.int64_attribute(root, "format_version", format_version);
  w.string_attribute(root, "model", l.model);
  w.int64_attribute(root, "n", l.n);
  w.int64_attribute(root, "m", l.m);
  w.int64_attribute(root, "k", l.k);
  if (!l.coordinate_names.empty()) w.strings_attribute(root, "coordinate_names", l.coordinate_names);
  // The names members.csv and `lockstep plot` give the coordinates, written once here so that the
  // plot reads them rather than applying the rule again.
  w.strings_attribute(root, "coordinate_columns", coordinate_columns(l));
  w.int64_attribute(root, "members", l.members);
  w.int64_attribute(root, "trajectories", l.trajectories ? 1 : 0);
  w.string_attribute(root, "multipliers", l.multipliers);
  if (l.quantity_count() > 0) {
    w.strings_attribute(root, "quantity_names", l.quantity_names);
    w.strings_attribute(root, "quantity_descriptions", l.quantity_descriptions);
  }

  const hsize_t N = hs(l.members), S = hs(l.save_count());
  w.write_whole(root, "/t", "t", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double), {S}, l.save_times.data());

  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (l.trajectories) {
    auto trajectory = [&](const char* name, int width) {
      w.create_dataset(root, std::string("/") + name, name, H5T_IEEE_F64LE, sizeof(double), {N, S, hs(width)}, true, &nan);
    };
    trajectory("q", l.n);
    trajectory("v", l.n);
    trajectory("lambda", l.m);
    if (l.has_mu) trajectory("mu", l.m);
    if (l.has_nu) trajectory("nu", l.k);
    if (l.quantity_count() > 0) trajectory("quantities", l.quantity_count());
  }

  w.members_group = w.check(group_handle(H5Gcreate2(root, "members", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), "create /members");
  const hid_t mg = w.members_group.get();
  const std::int32_t status_fill = -1;
  w.create_dataset(mg, "/members/status", "status", H5T_STD_I32LE, sizeof(std::int32_t), {N}, true, &status_fill);
  {
    std::vector<std::string> names;
    for (int c = 0; c < member_status_count; ++c) names.emplace_back(status_name(static_cast<member_status>(c)));
    w.strings_attribute(w.dataset("/members/status"), "names", names);
  }
  const std::int64_t counter_fill = -1;
  for (const char* name : member_integer_datasets)
    w.create_dataset(mg, std::string("/members/") + name, name, H5T_STD_I64LE, sizeof(std::int64_t), {N}, true, &counter_fill);
  for (const char* name : member_real_datasets)
    w.create_dataset(mg, std::string("/members/") + name, name, H5T_IEEE_F64LE, sizeof(double), {N}, true, &nan);
  if (l.explicit_steps)
    for (const char* name : member_explicit_datasets)
      w.create_dataset(mg, std::string("/members/") + name, name, H5T_STD_I64LE, sizeof(std::int64_t), {N}, true, &counter_fill);
  w.create_dataset(mg, "/members/final_q", "final_q", H5T_IEEE_F64LE, sizeof(double), {N, hs(l.n)}, true, &nan);
  w.create_dataset(mg, "/members/final_v", "final_v", H5T_IEEE_F64LE, sizeof(double), {N, hs(l.n)}, true, &nan);
  const hsize_t V = l.varied_names.size();
  w.create_dataset(mg, "/members/inputs", "inputs", H5T_IEEE_F64LE, sizeof(double), {N, V}, true, &nan);
  {
    const hid_t inputs = w.dataset("/members/inputs");
    w.strings_attribute(inputs, "names", l.varied_names);
    std::vector<std::int64_t> shape(l.grid_shape.begin(), l.grid_shape.end());
    std::vector<std::int32_t> dims(l.grid_dims.begin(), l.grid_dims.end());
    w.array_attribute(inputs, "grid_shape", H5T_STD_I64LE, H5T_NATIVE_INT64, shape);
    w.array_attribute(inputs, "grid_dims", H5T_STD_I32LE, H5T_NATIVE_INT32, dims);
  }

  w.statistics_group = w.check(group_handle(H5Gcreate2(root, "statistics", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), "create /statistics");

  if (const events_layout& ev = l.events; !ev.functions.empty()) {
    // Created here and streamed like /members (docs/RESULTS-FORMAT.md, /events).
    group_handle g = w.check(group_handle(H5Gcreate2(root, "events", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), "create /events");
    const hid_t eg = g.get();
    std::vector<std::string> names, directions, actions, descriptions;
    for (const auto& f : ev.functions) {
      names.push_back(f.name);
      directions.push_back(f.direction);
      actions.push_back(f.action);
      descriptions.push_back(f.description);
    }
    w.strings_attribute(eg, "names", names);
    w.strings_attribute(eg, "directions", directions);
    w.strings_attribute(eg, "actions", actions);
    w.strings_attribute(eg, "descriptions", descriptions);
    w.int64_attribute(eg, "capacity", ev.capacity);
    w.double_attribute(eg, "time_tolerance", ev.time_tolerance);
    w.int64_attribute(eg, "interior_checks", ev.interior_checks);
    const hsize_t E = ev.functions.size(), C = hs(ev.capacity);
    const std::int64_t zero = 0;
    const std::int32_t none = -1;
    w.create_dataset(eg, "/events/count", "count", H5T_STD_I64LE, sizeof(std::int64_t), {N, E}, true, &zero);
    w.create_dataset(eg, "/events/first_time", "first_time", H5T_IEEE_F64LE, sizeof(double), {N, E}, true, &nan);
    w.create_dataset(eg, "/events/records", "records", H5T_STD_I64LE, sizeof(std::int64_t), {N}, true, &zero);
    w.create_dataset(eg, "/events/stop_event", "stop_event", H5T_STD_I32LE, sizeof(std::int32_t), {N}, true, &none);
    w.create_dataset(eg, "/events/t", "t", H5T_IEEE_F64LE, sizeof(double), {N, C}, true, &nan);
    w.create_dataset(eg, "/events/event", "event", H5T_STD_I32LE, sizeof(std::int32_t), {N, C}, true, &none);
    w.create_dataset(eg, "/events/q", "q", H5T_IEEE_F64LE, sizeof(double), {N, C, hs(l.n)}, true, &nan);
    w.create_dataset(eg, "/events/v", "v", H5T_IEEE_F64LE, sizeof(double), {N, C, hs(l.n)}, true, &nan);
    w.create_dataset(eg, "/events/lambda", "lambda", H5T_IEEE_F64LE, sizeof(double), {N, C, hs(l.m)}, true, &nan);
    if (l.has_nu) w.create_dataset(eg, "/events/nu", "nu", H5T_IEEE_F64LE, sizeof(double), {N, C, hs(l.k)}, true, &nan);
  }

  if (const lyapunov_layout& ly = l.lyapunov; ly.exponents > 0) {
    // Created here and streamed like /members: a member's row arrives with its block.
    group_handle g = w.check(group_handle(H5Gcreate2(root, "lyapunov", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), "create /lyapunov");
    const hid_t lg = g.get();
    w.string_attribute(lg, "method", ly.method);
    w.string_attribute(lg, "metric", ly.metric);
    w.double_attribute(lg, "renormalize", ly.renormalize);
    w.double_attribute(lg, "transient", ly.transient);
    if (!std::isnan(ly.separation)) w.double_attribute(lg, "separation", ly.separation);
    w.int64_attribute(lg, "dimension", ly.dimension);
    w.int64_attribute(lg, "exponents", ly.exponents);
    w.int64_attribute(lg, "history_length", ly.history);
    const hsize_t p = hs(ly.exponents), H = hs(ly.history);
    w.create_dataset(lg, "/lyapunov/exponents", "exponents", H5T_IEEE_F64LE, sizeof(double), {N, p}, true, &nan);
    w.create_dataset(lg, "/lyapunov/status", "status", H5T_STD_I32LE, sizeof(std::int32_t), {N}, true, &status_fill);
    {
      std::vector<std::string> names;
      for (int c = 0; c < member_status_count; ++c) names.emplace_back(status_name(static_cast<member_status>(c)));
      w.strings_attribute(w.dataset("/lyapunov/status"), "names", names);
    }
    w.create_dataset(lg, "/lyapunov/t_start", "t_start", H5T_IEEE_F64LE, sizeof(double), {N}, true, &nan);
    w.create_dataset(lg, "/lyapunov/t_end", "t_end", H5T_IEEE_F64LE, sizeof(double), {N}, true, &nan);
    w.create_dataset(lg, "/lyapunov/renormalizations", "renormalizations", H5T_STD_I64LE, sizeof(std::int64_t), {N}, true, &counter_fill);
    w.create_dataset(lg, "/lyapunov/steps", "steps", H5T_STD_I64LE, sizeof(std::int64_t), {N}, true, &counter_fill);
    if (H > 0) {
      w.create_dataset(lg, "/lyapunov/history_t", "history_t", H5T_IEEE_F64LE, sizeof(double), {N, H}, true, &nan);
      w.create_dataset(lg, "/lyapunov/history", "history", H5T_IEEE_F64LE, sizeof(double), {N, H, p}, true, &nan);
    }
    if (!g.close()) w.fail_h5("close /lyapunov");
  }
}

results_writer::~results_writer() = default;

const results_layout& results_writer::layout() const { return impl_->layout; }
const std::filesystem::path& results_writer::final_path() const { return impl_->file_name.final_path(); }
const std::filesystem::path& results_writer::temporary_path() const { return impl_->file_name.temporary_path(); }

void results_writer::write_members(const member_block& b) {
  impl& w = *impl_;
  w.usable();
  const results_layout& l = w.layout;
  auto bad = [](const std::string& why) { throw std::invalid_argument("results_writer::write_members: " + why); };
  if (b.first < 0 || b.count < 0 || b.first > l.members - b.count)
    bad("members [" + std::to_string(b.first) + ", " + std::to_string(b.first + b.count) + ") are outside [0, " + std::to_string(l.members) + ")");
  if (b.count == 0) return;
  if (b.status == nullptr || b.counters == nullptr || b.final_t == nullptr || b.y_final == nullptr) bad("status, counters, final_t and y_final are required");
  if (b.inputs == nullptr && !l.varied_names.empty()) bad("inputs are required when inputs are varied");
  if (b.y == nullptr && l.trajectories && l.save_count() > 0) bad("y is required when trajectories are stored");
  if (l.lyapunov.exponents > 0) {
    const lyapunov_values* y = b.lyapunov;
    if (y == nullptr || y->status == nullptr || y->exponents == nullptr || y->t_start == nullptr || y->t_end == nullptr ||
        y->renormalizations == nullptr || y->steps == nullptr || (l.lyapunov.history > 0 && (y->history_t == nullptr || y->history == nullptr)))
      bad("the Lyapunov results are required when the layout has /lyapunov");
  }

  error_printing_off quiet;
  const hsize_t S = hs(l.save_count()), Y = hs(l.state_size());
  const hsize_t n = hs(l.n), m = hs(l.m), k = hs(l.k);
  if (l.trajectories) {
    const hsize_t W = hs(l.value_size());  // a save time's values: the state, then the quantities
    w.write_rows("/q", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {S}, n, W, 0, b.y);
    w.write_rows("/v", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {S}, n, W, n, b.y);
    w.write_rows("/lambda", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {S}, m, W, 2 * n, b.y);
    if (l.has_mu) w.write_rows("/mu", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {S}, m, W, 2 * n + m, b.y);
    if (l.has_nu) w.write_rows("/nu", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {S}, k, W, 2 * n + 2 * m, b.y);
    if (l.quantity_count() > 0)
      w.write_rows("/quantities", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {S}, hs(l.quantity_count()), W, Y,
                   b.y);
  }

  const auto count = static_cast<std::size_t>(b.count);
  {
    std::vector<std::int32_t> status(count);
    for (std::size_t i = 0; i < count; ++i) status[i] = static_cast<std::int32_t>(b.status[i]);
    w.write_column("/members/status", H5T_NATIVE_INT32, b.first, status);
  }
  // member_counters is an array of structs: gather one field at a time.
  auto integer_field = [&](const char* name, long member_counters::*field) {
    std::vector<std::int64_t> column(count);
    for (std::size_t i = 0; i < count; ++i) column[i] = b.counters[i].*field;
    w.write_column(std::string("/members/") + name, H5T_NATIVE_INT64, b.first, column);
  };
  auto real_field = [&](const char* name, double member_counters::*field) {
    std::vector<double> column(count);
    for (std::size_t i = 0; i < count; ++i) column[i] = b.counters[i].*field;
    w.write_column(std::string("/members/") + name, H5T_NATIVE_DOUBLE, b.first, column);
  };
  integer_field("steps", &member_counters::steps);
  integer_field("rejected", &member_counters::rejected_steps);
  integer_field("newton_iterations", &member_counters::newton_iterations);
  integer_field("newton_failures", &member_counters::newton_failures);
  integer_field("jacobian_evaluations", &member_counters::jacobian_evaluations);
  integer_field("lu_factorizations", &member_counters::lu_factorizations);
  integer_field("model_evaluations", &member_counters::model_evaluations);
  integer_field("projections", &member_counters::projections);
  real_field("final_h", &member_counters::last_h);
  real_field("max_phi", &member_counters::max_phi);
  real_field("max_velocity_residual", &member_counters::max_velocity_residual);
  real_field("init_q_correction", &member_counters::init_q_correction);
  real_field("init_v_correction", &member_counters::init_v_correction);
  real_field("max_projection_q", &member_counters::max_projection_q);
  real_field("max_projection_v", &member_counters::max_projection_v);
  integer_field("dropped_rows", &member_counters::dropped_rows);
  integer_field("rank_changes", &member_counters::rank_changes);
  real_field("max_dropped_phi", &member_counters::max_dropped_phi);
  if (l.explicit_steps) {
    integer_field("explicit_steps", &member_counters::explicit_steps);
    integer_field("method_switches", &member_counters::method_switches);
    integer_field("stiffness_detections", &member_counters::stiffness_detections);
  }
  w.write_rows("/members/final_t", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {}, 1, 1, 0, b.final_t);
  w.write_rows("/members/final_q", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {}, n, Y, 0, b.y_final);
  w.write_rows("/members/final_v", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {}, n, Y, n, b.y_final);
  const hsize_t V = l.varied_names.size();
  w.write_rows("/members/inputs", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {}, V, V, 0, b.inputs);
  if (const lyapunov_layout& ly = l.lyapunov; ly.exponents > 0) {
    const lyapunov_values& y = *b.lyapunov;
    const hsize_t p = hs(ly.exponents), H = hs(ly.history);
    std::vector<std::int32_t> status(count);
    for (std::size_t i = 0; i < count; ++i) status[i] = static_cast<std::int32_t>(y.status[i]);
    w.write_column("/lyapunov/status", H5T_NATIVE_INT32, b.first, status);
    w.write_rows("/lyapunov/exponents", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {}, p, p, 0, y.exponents);
    w.write_rows("/lyapunov/t_start", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {}, 1, 1, 0, y.t_start);
    w.write_rows("/lyapunov/t_end", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {}, 1, 1, 0, y.t_end);
    w.write_rows("/lyapunov/renormalizations", H5T_NATIVE_INT64, sizeof(std::int64_t), b.first, b.count, {}, 1, 1, 0, y.renormalizations);
    w.write_rows("/lyapunov/steps", H5T_NATIVE_INT64, sizeof(std::int64_t), b.first, b.count, {}, 1, 1, 0, y.steps);
    if (H > 0) {
      w.write_rows("/lyapunov/history_t", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {}, H, H, 0, y.history_t);
      w.write_rows("/lyapunov/history", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {H}, p, p, 0, y.history);
    }
  }
  if (const events_layout& ev = l.events; !ev.functions.empty()) {
    if (b.event_counts == nullptr || b.event_first_times == nullptr || b.event_records_made == nullptr ||
        b.stop_event == nullptr || (ev.capacity > 0 && b.event_records == nullptr))
      throw std::invalid_argument("results_writer::write_members: the members' events are required");
    const hsize_t E = ev.functions.size(), C = hs(ev.capacity), R = 2 + Y;
    std::vector<std::int64_t> counts(count * E), made(count);
    std::vector<std::int32_t> stop(count), event(count * C);
    for (std::size_t i = 0; i < count * E; ++i) counts[i] = b.event_counts[i];
    for (std::size_t i = 0; i < count; ++i) {
      made[i] = b.event_records_made[i];
      stop[i] = b.stop_event[i];
      for (hsize_t r = 0; r < C; ++r) {
        const double k = b.event_records[(i * C + r) * R + 1];
        event[i * C + r] = std::isnan(k) ? -1 : static_cast<std::int32_t>(k);
      }
    }
    w.write_rows("/events/count", H5T_NATIVE_INT64, sizeof(std::int64_t), b.first, b.count, {}, E, E, 0, counts.data());
    w.write_rows("/events/first_time", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {}, E, E, 0, b.event_first_times);
    w.write_column("/events/records", H5T_NATIVE_INT64, b.first, made);
    w.write_column("/events/stop_event", H5T_NATIVE_INT32, b.first, stop);
    w.write_rows("/events/t", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {C}, 1, R, 0, b.event_records);
    w.write_rows("/events/event", H5T_NATIVE_INT32, sizeof(std::int32_t), b.first, b.count, {}, C, C, 0, event.data());
    const hsize_t n_ = hs(l.n), m_ = hs(l.m), k_ = hs(l.k);
    w.write_rows("/events/q", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {C}, n_, R, 2, b.event_records);
    w.write_rows("/events/v", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {C}, n_, R, 2 + n_, b.event_records);
    w.write_rows("/events/lambda", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {C}, m_, R, 2 + 2 * n_, b.event_records);
    if (l.has_nu)
      w.write_rows("/events/nu", H5T_NATIVE_DOUBLE, sizeof(double), b.first, b.count, {C}, k_, R, 2 + 2 * n_ + 2 * m_,
                   b.event_records);
  }
  w.record_written(b.first, b.count);
}

void results_writer::write_statistic(std::string_view name, double probability, const statistic_values& s) {
  impl& w = *impl_;
  w.usable();
  validate_statistic_name(name);
  error_printing_off quiet;
  const results_layout& l = w.layout;
  const std::string group_name(name);
  const std::string path = "/statistics/" + group_name;
  const hid_t parent = w.statistics_group.get();
  const htri_t exists = H5Lexists(parent, group_name.c_str(), H5P_DEFAULT);
  w.check(static_cast<herr_t>(exists), "look up " + path);
  if (exists > 0) throw std::logic_error("results_writer: statistic '" + group_name + "' was already written");

  group_handle g = w.check(group_handle(H5Gcreate2(parent, group_name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), "create " + path);
  if (!std::isnan(probability)) w.double_attribute(g.get(), "probability", probability);
  const hsize_t S = hs(l.save_count());
  auto part = [&](const char* part_name, const double* data, int width) {
    if (data == nullptr) return;
    w.write_whole(g.get(), path + "/" + part_name, part_name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double), {S, hs(width)}, data);
  };
  part("q", s.q, l.n);
  part("v", s.v, l.n);
  part("lambda", s.lambda, l.m);
  if (l.has_mu) part("mu", s.mu, l.m);
  if (l.has_nu) part("nu", s.nu, l.k);
  if (l.quantity_count() > 0) part("quantities", s.quantities, l.quantity_count());
  if (s.count != nullptr)
    w.write_whole(g.get(), path + "/count", "count", H5T_STD_I64LE, H5T_NATIVE_INT64, sizeof(std::int64_t),
                  {S, hs(l.value_size())}, s.count);
  if (!g.close()) w.fail_h5("close " + path);
}

void results_writer::write_statistic_state(std::string_view name, double probability, const double* y, const std::int64_t* count) {
  const results_layout& l = impl_->layout;
  const std::size_t S = static_cast<std::size_t>(l.save_count()), Y = static_cast<std::size_t>(l.value_size());
  const std::size_t n = static_cast<std::size_t>(l.n), m = static_cast<std::size_t>(l.m), k = static_cast<std::size_t>(l.k);
  // Statistics are small ([S][Y + Z]); splitting them here keeps write_statistic the one writing path.
  auto slice = [&](std::size_t offset, std::size_t width) {
    std::vector<double> out(S * width);
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t j = 0; j < width; ++j) out[s * width + j] = y[s * Y + offset + j];
    return out;
  };
  const auto q = slice(0, n), v = slice(n, n), lambda = slice(2 * n, m), mu = slice(2 * n + m, m), nu = slice(2 * n + 2 * m, k);
  const auto quantities = slice(static_cast<std::size_t>(l.state_size()), static_cast<std::size_t>(l.quantity_count()));
  write_statistic(name, probability,
                  statistic_values{q.data(), v.data(), lambda.data(), mu.data(), nu.data(), count, quantities.data()});
}

void results_writer::write_exceedance(const exceedance_values& x) {
  impl& w = *impl_;
  w.usable();
  error_printing_off quiet;
  const results_layout& l = w.layout;
  group_handle g = w.new_root_group("exceedance");
  w.double_attribute(g.get(), "confidence", 0.95);
  w.string_attribute(g.get(), "interval", x.replicates > 0 ? "replicates" : "wilson");
  if (x.replicates > 0) w.int64_attribute(g.get(), "replicates", x.replicates);
  const hsize_t S = hs(l.save_count()), Y = hs(l.value_size());
  const auto doubles = [&](const char* name, const std::vector<hsize_t>& dims, const double* data) {
    w.write_whole(g.get(), std::string("/exceedance/") + name, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double),
                  dims, data);
  };
  const auto counts = [&](const char* name, const std::int64_t* data) {
    w.write_whole(g.get(), std::string("/exceedance/") + name, name, H5T_STD_I64LE, H5T_NATIVE_INT64,
                  sizeof(std::int64_t), {S, Y}, data);
  };
  doubles("threshold", {Y}, x.threshold.data());
  doubles("probability", {S, Y}, x.probability.data());
  doubles("low", {S, Y}, x.low.data());
  doubles("high", {S, Y}, x.high.data());
  counts("above", x.above);
  counts("count", x.count);
  if (!g.close()) w.fail_h5("close /exceedance");
}

void results_writer::write_event_distribution(const std::vector<double>& fraction, const std::vector<double>& low,
                                              const std::vector<double>& high, const std::vector<double>& quantiles,
                                              const std::vector<double>& probabilities, int replicates) {
  impl& w = *impl_;
  w.usable();
  error_printing_off quiet;
  const results_layout& l = w.layout;
  const hsize_t S = hs(l.save_count()), E = l.events.functions.size(), P = probabilities.size();
  if (E == 0 || fraction.size() != S * E || low.size() != S * E || high.size() != S * E || quantiles.size() != P * E)
    throw std::logic_error("results_writer::write_event_distribution: arrays of the wrong size, or no events");
  group_handle g = w.check(group_handle(H5Gopen2(w.file.get(), "events", H5P_DEFAULT)), "open /events");
  w.double_attribute(g.get(), "confidence", 0.95);
  w.string_attribute(g.get(), "interval", replicates > 0 ? "replicates" : "wilson");
  if (replicates > 0) w.int64_attribute(g.get(), "replicates", replicates);
  w.array_attribute(g.get(), "quantiles", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, probabilities);
  const auto doubles = [&](const char* name, const std::vector<hsize_t>& dims, const std::vector<double>& data) {
    w.write_whole(g.get(), std::string("/events/") + name, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double),
                  dims, data.data());
  };
  doubles("fraction", {S, E}, fraction);
  doubles("fraction_low", {S, E}, low);
  doubles("fraction_high", {S, E}, high);
  doubles("first_time_quantiles", {P, E}, quantiles);
  if (!g.close()) w.fail_h5("close /events");
}

void results_writer::write_sensitivity(const sensitivity_values& x) {
  impl& w = *impl_;
  w.usable();
  error_printing_off quiet;
  const results_layout& l = w.layout;
  group_handle g = w.new_root_group("sensitivity");
  w.strings_attribute(g.get(), "inputs", x.inputs);
  w.string_attribute(g.get(), "design", "saltelli");
  w.string_attribute(g.get(), "estimators",
                     "first: Saltelli et al. 2010; total: Jansen 1999; second: Saltelli 2002; outputs centred by their mean");
  w.int64_attribute(g.get(), "base", x.base);
  w.int64_attribute(g.get(), "replicates", x.replicates);
  w.double_attribute(g.get(), "confidence", x.confidence);
  w.string_attribute(g.get(), "intervals", x.intervals);
  if (x.resamples > 0) w.int64_attribute(g.get(), "resamples", x.resamples);
  w.double_attribute(g.get(), "max_failed", x.max_failed);
  const std::size_t S = static_cast<std::size_t>(l.save_count()), Y = static_cast<std::size_t>(l.value_size());
  const std::size_t P = x.inputs.size();
  // One index: [S][Y + Z][P] in the value order, written as its parts [S][width][P].
  auto index = [&](const char* name, const double* data) {
    if (data != nullptr)
      w.write_state_parts(g.get(), std::string("/sensitivity/") + name, name, data, S, P, true, true);
  };
  index("first", x.first);
  index("first_conf", x.first_conf);
  index("total", x.total);
  index("total_conf", x.total_conf);
  // Second-order indices, P x P per value, whole in the value order.
  const std::vector<hsize_t> pair_dims{hs(static_cast<long>(S)), hs(static_cast<long>(Y)), hs(static_cast<long>(P)),
                                       hs(static_cast<long>(P))};
  if (x.second != nullptr)
    w.write_whole(g.get(), "/sensitivity/second", "second", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double), pair_dims,
                  x.second);
  if (x.second_conf != nullptr)
    w.write_whole(g.get(), "/sensitivity/second_conf", "second_conf", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double),
                  pair_dims, x.second_conf);
  if (x.rows_used != nullptr)
    w.write_whole(g.get(), "/sensitivity/rows_used", "rows_used", H5T_STD_I64LE, H5T_NATIVE_INT64, sizeof(std::int64_t),
                  {hs(static_cast<long>(S)), hs(static_cast<long>(Y))}, x.rows_used);
  if (x.exponents > 0) {
    group_handle lg = w.check(group_handle(H5Gcreate2(g.get(), "lyapunov", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
                              "create /sensitivity/lyapunov");
    const std::vector<hsize_t> dims{hs(x.exponents), hs(static_cast<long>(P))};
    const auto index = [&](const char* name, const double* data) {
      w.write_whole(lg.get(), std::string("/sensitivity/lyapunov/") + name, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                    sizeof(double), dims, data);
    };
    index("first", x.lyapunov_first);
    index("first_conf", x.lyapunov_first_conf);
    index("total", x.lyapunov_total);
    index("total_conf", x.lyapunov_total_conf);
    w.write_whole(lg.get(), "/sensitivity/lyapunov/rows_used", "rows_used", H5T_STD_I64LE, H5T_NATIVE_INT64,
                  sizeof(std::int64_t), {hs(x.exponents)}, x.lyapunov_rows_used);
    if (!lg.close()) w.fail_h5("close /sensitivity/lyapunov");
  }
  if (!g.close()) w.fail_h5("close /sensitivity");
}

void results_writer::write_derivative_measures(const derivative_measure_values& x) {
  impl& w = *impl_;
  w.usable();
  error_printing_off quiet;
  const results_layout& l = w.layout;
  group_handle g = w.new_root_group("derivative_measures");
  w.strings_attribute(g.get(), "inputs", x.inputs);
  w.double_attribute(g.get(), "t", x.t);
  w.int64_attribute(g.get(), "members", x.members);
  w.double_attribute(g.get(), "max_failed", x.max_failed);
  w.string_attribute(g.get(), "estimators",
                     "nu: Sobol' & Kucherenko 2009; total_bound: Lamboni et al. 2013 (Poincare constants: uniform "
                     "(b - a)^2 / pi^2, normal sigma^2, lognormal in log x)");
  w.string_attribute(g.get(), "refused", x.refused);
  const std::size_t P = x.inputs.size();
  const hsize_t Y = hs(l.state_size());
  w.write_state_parts(g.get(), "/derivative_measures/nu", "nu", x.nu, 1, P, false);
  w.write_state_parts(g.get(), "/derivative_measures/nu_stderr", "nu_stderr", x.nu_stderr, 1, P, false);
  w.write_state_parts(g.get(), "/derivative_measures/total_bound", "total_bound", x.total_bound, 1, P, false);
  w.write_whole(g.get(), "/derivative_measures/variance", "variance", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double),
                {Y}, x.variance);
  w.write_whole(g.get(), "/derivative_measures/members_used", "members_used", H5T_STD_I64LE, H5T_NATIVE_INT64,
                sizeof(std::int64_t), {Y}, x.members_used);
  if (!g.close()) w.fail_h5("close /derivative_measures");
}

void results_writer::set_quantile_rank_error(double epsilon) {
  impl& w = *impl_;
  w.usable();
  error_printing_off quiet;
  w.double_attribute(w.statistics_group.get(), "quantile_rank_error", epsilon);
}

void results_writer::set_attribute(std::string_view name, std::string_view value) {
  impl& w = *impl_;
  w.usable();
  error_printing_off quiet;
  w.string_attribute(w.file.get(), name, value);
}

void results_writer::set_attribute(std::string_view name, double value) {
  impl& w = *impl_;
  w.usable();
  error_printing_off quiet;
  w.double_attribute(w.file.get(), name, value);
}

void results_writer::set_attribute(std::string_view name, std::int64_t value) {
  impl& w = *impl_;
  w.usable();
  error_printing_off quiet;
  w.int64_attribute(w.file.get(), name, value);
}

void results_writer::set_run_info(const run_info& info) {
  set_attribute("study", std::string_view(info.study_text));
  set_attribute("lockstep_version", std::string_view(info.lockstep_version));
  set_attribute("git_revision", std::string_view(info.git_revision));
  set_attribute("backend", std::string_view(info.backend));
  set_attribute("threads", static_cast<std::int64_t>(info.threads));
  set_attribute("wall_time_seconds", info.wall_time_seconds);
}

void results_writer::commit() {
  impl& w = *impl_;
  w.usable();
  if (const auto gap = w.first_gap())
    throw std::logic_error("results_writer::commit: members [" + std::to_string(gap->first) + ", " + std::to_string(gap->second) + ") of " +
                           w.file_name.final_path().string() + " were never written");
  error_printing_off quiet;
  // Everything cached (chunks, metadata) is written here: on a full disk this is where the failure
  // surfaces (recorded by the driver), and it must stop the rename.
  w.check(H5Fflush(w.file.get(), H5F_SCOPE_GLOBAL), "flush");
  for (auto& [path, d] : w.datasets)
    if (!d.close()) w.fail_h5("close " + path);
  w.datasets.clear();
  if (!w.members_group.close()) w.fail_h5("close /members");
  if (!w.statistics_group.close()) w.fail_h5("close /statistics");
  if (!w.file.close()) w.fail_h5("close");
  w.check_record("close");
  w.file_name.commit();
}

// ---- the reader's check ----------------------------------------------------------------------------

namespace {

// A scalar string attribute of the root (variable or fixed length), or nullopt when it cannot be read.
std::optional<std::string> read_string_attribute(hid_t file, const char* name) {
  if (H5Aexists(file, name) <= 0) return std::nullopt;
  attribute_handle a(H5Aopen(file, name, H5P_DEFAULT));
  if (!a.valid()) return std::nullopt;
  type_handle stored(H5Aget_type(a.get()));
  if (!stored.valid() || H5Tget_class(stored.get()) != H5T_STRING) return std::nullopt;
  if (H5Tis_variable_str(stored.get()) > 0) {
    type_handle memory(H5Tcopy(H5T_C_S1));
    if (!memory.valid() || H5Tset_size(memory.get(), H5T_VARIABLE) < 0) return std::nullopt;
    H5Tset_cset(memory.get(), H5Tget_cset(stored.get()));
    char* text = nullptr;
    if (H5Aread(a.get(), memory.get(), &text) < 0) return std::nullopt;
    std::string value = text != nullptr ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(stored.get());
  std::string value(size, '\0');
  type_handle memory(H5Tcopy(stored.get()));
  if (!memory.valid() || H5Aread(a.get(), memory.get(), value.data()) < 0) return std::nullopt;
  value.resize(std::strlen(value.c_str()));
  return value;
}

}  // namespace

void check_results_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  const auto refuse = [&](int system_error, const std::string& why) -> void {
    throw io_error(path, system_error, "'" + name + "': " + why);
  };
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) refuse(ENOENT, "no such file");
  if (std::filesystem::is_directory(path, ec)) refuse(EISDIR, "is a directory, not a results file");
  const error_printing_off quiet;
  file_handle file(H5Fopen(name.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) refuse(0, "not an HDF5 file (or not readable)");
  const hid_t f = file.get();
  const auto has_link = [&](const char* link) { return H5Lexists(f, link, H5P_DEFAULT) > 0; };
  const bool has_format = H5Aexists(f, "format") > 0;
  const bool has_version = H5Aexists(f, "format_version") > 0;
  // Written before the root carried its format: version 1's layout.
  if (!has_format && !has_version && has_link("t") && has_link("members") && has_link("members/status")) return;
  const std::optional<std::string> format = read_string_attribute(f, "format");
  if (!format || *format != results_format)
    refuse(0, "not a lockstep results file (no format = \"" + std::string(results_format) + "\" attribute)");
  std::int64_t version = 0;
  bool version_read = false;
  if (has_version) {
    attribute_handle a(H5Aopen(f, "format_version", H5P_DEFAULT));
    type_handle stored(a.valid() ? H5Aget_type(a.get()) : H5I_INVALID_HID);
    version_read = stored.valid() && H5Tget_class(stored.get()) == H5T_INTEGER &&
                   H5Aread(a.get(), H5T_NATIVE_INT64, &version) >= 0;
  }
  if (!version_read) refuse(0, "a lockstep results file without a readable integer format_version attribute");
  if (version != results_format_version) {
    const std::optional<std::string> writer = read_string_attribute(f, "lockstep_version");
    refuse(0, "results format version " + std::to_string(version) +
                  (writer ? " (written by lockstep " + *writer + ")" : std::string()) + "; this lockstep reads version " +
                  std::to_string(results_format_version) +
                  " (docs/RESULTS-FORMAT.md): read it with the lockstep that wrote it, or run the study again");
  }
}

}  // namespace lockstep::io
