// Regular-file reading and bounded JSON parsing (see include/neuronsim/isa/file_input.hpp).
#include "neuronsim/isa/file_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "neuronsim/error.hpp"

namespace neuronsim::isa {

const char *file_type_name(unsigned mode) {
  const mode_t m = static_cast<mode_t>(mode);
  if (S_ISREG(m))
    return "a regular file";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m))
    return "a symbolic link";
  return "not a regular file";
}

namespace {

const char *kind_of(mode_t m) {
  return file_type_name(static_cast<unsigned>(m));
}

[[noreturn]] void fail(const std::string &path, const std::string &msg) {
  ErrorContext c;
  c.file = path;
  throw InputError(c, msg);
}

// Opens `path` for reading without blocking (a FIFO's open() would wait for a writer) and checks it is a regular
// file no larger than max_bytes. Returns the descriptor and the size.
int open_regular(const std::string &path, uint64_t max_bytes, const std::string &what, uint64_t &size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open " + what + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    fail(path, "cannot stat " + what + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, what + " is " + kind_of(st.st_mode) + ", not a regular file");
  }
  size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    fail(path, what + " is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
                   " this reader accepts");
  }
  return fd;
}

template <typename Buf> Buf read_all(const std::string &path, uint64_t max_bytes, const std::string &what) {
  uint64_t size = 0;
  const int fd = open_regular(path, max_bytes, what, size);
  Buf buf;
  try {
    buf.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc &) {
    ::close(fd);
    fail(path, what + " of " + std::to_string(size) + " bytes cannot be held in host memory");
  }
  size_t off = 0;
  while (off < buf.size()) {
    const ssize_t r = ::read(fd, &buf[off], buf.size() - off);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int e = errno;
      ::close(fd);
      fail(path, "read error in " + what + ": " + std::strerror(e));
    }
    if (r == 0) break;  // shrank while reading
    off += static_cast<size_t>(r);
  }
  ::close(fd);
  if (off != buf.size())
    fail(path, what + " changed while it was read (" + std::to_string(off) + " of " + std::to_string(buf.size()) +
                   " bytes)");
  return buf;
}

using json = nlohmann::json;

// A SAX handler that builds the DOM (nlohmann's own builder) while bounding the depth and remembering where in
// the document it is, so that an error can name the JSON path of the value it is about.
class BoundedSax {
public:
  BoundedSax(json &out, int max_depth) : dom_(out, false), max_depth_(max_depth) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t &s) { return value() && dom_.number_float(v, s); }
  bool string(json::string_t &v) { return value() && dom_.string(v); }
  bool binary(json::binary_t &v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) { return open(false) && dom_.start_object(n); }
  bool key(json::string_t &k) {
    frames_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return open(true) && dom_.start_array(n); }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string &last_token, const nlohmann::detail::exception &ex) {
    error_position_ = position;
    error_token_ = last_token;
    error_id_ = ex.id;
    error_what_ = ex.what();
    error_path_ = path(true);
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string &deep_path() const { return deep_path_; }
  int error_id() const { return error_id_; }
  std::size_t error_position() const { return error_position_; }
  const std::string &error_token() const { return error_token_; }
  const std::string &error_what() const { return error_what_; }
  const std::string &error_path() const { return error_path_; }

private:
  struct Frame {
    bool array = false;
    size_t next = 0;  // array: elements started so far
    std::string key;  // object: the last key
  };
  // A value starts: an array element takes the next index.
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().next;
    return true;
  }
  bool open(bool array) {
    value();
    if (static_cast<int>(frames_.size()) >= max_depth_) {
      too_deep_ = true;
      deep_path_ = path(false);
      return false;
    }
    frames_.push_back(Frame{array, 0, {}});
    return true;
  }
  // "functions[0].blocks[1]". `pending`: the innermost array frame's value has not been counted yet.
  std::string path(bool pending) const {
    std::string s;
    for (size_t i = 0; i < frames_.size(); ++i) {
      const Frame &f = frames_[i];
      if (f.array) {
        const size_t idx = (pending && i + 1 == frames_.size()) ? f.next : (f.next ? f.next - 1 : 0);
        s += "[" + std::to_string(idx) + "]";
      } else if (!f.key.empty()) {
        s += (s.empty() ? "" : ".") + f.key;
      }
    }
    return s;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  int max_depth_;
  std::vector<Frame> frames_;
  bool too_deep_ = false;
  std::string deep_path_;
  int error_id_ = 0;
  std::size_t error_position_ = 0;
  std::string error_token_, error_what_, error_path_;
};

} // namespace

void require_regular_file(const std::string &path, const std::string &what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(path, "cannot open " + what + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(path, what + " is " + kind_of(st.st_mode) + ", not a regular file");
}

uint64_t regular_file_size(const std::string &path, const std::string &what) {
  uint64_t size = 0;
  ::close(open_regular(path, UINT64_MAX, what, size));
  return size;
}

std::vector<uint8_t> read_regular_file_head(const std::string &path, uint64_t max_head, const std::string &what,
                                            uint64_t &size) {
  const int fd = open_regular(path, UINT64_MAX, what, size);
  std::vector<uint8_t> buf(static_cast<size_t>(std::min(size, max_head)));
  size_t off = 0;
  while (off < buf.size()) {
    const ssize_t r = ::read(fd, buf.data() + off, buf.size() - off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    off += static_cast<size_t>(r);
  }
  ::close(fd);
  buf.resize(off);
  return buf;
}

std::string read_regular_file(const std::string &path, uint64_t max_bytes, const std::string &what) {
  return read_all<std::string>(path, max_bytes, what);
}

std::vector<uint8_t> read_regular_file_bytes(const std::string &path, uint64_t max_bytes, const std::string &what) {
  return read_all<std::vector<uint8_t>>(path, max_bytes, what);
}

// A JSON path as a message shows it: a path hundreds of levels deep keeps its first and last 100 characters.
static std::string shortened(const std::string &path) {
  if (path.size() <= 240) return path;
  return path.substr(0, 100) + " ... " + path.substr(path.size() - 100);
}

json parse_json_text(const std::string &text, const std::string &file, int max_depth) {
  json out;
  BoundedSax sax(out, max_depth);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, true);
  ErrorContext c;
  c.file = file;
  if (sax.too_deep()) {
    c.field = shortened(sax.deep_path());
    throw InputError(c, "JSON nested deeper than " + std::to_string(max_depth) +
                            " levels (a deeper document is refused before it is read)");
  }
  if (!ok) {
    c.field = shortened(sax.error_path());
    // out_of_range.406: a number literal that does not fit a double (1e400).
    if (sax.error_id() == 406)
      throw InputError(c, "number '" + sax.error_token() + "' overflows a double (byte " +
                              std::to_string(sax.error_position()) + ")");
    throw InputError(c, "malformed JSON (byte " + std::to_string(sax.error_position()) + "): " + sax.error_what());
  }
  return out;
}

json read_json_file(const std::string &path, const std::string &what) {
  return parse_json_text(read_regular_file(path, kMaxInputFileBytes, what), path);
}

} // namespace neuronsim::isa
