// files.h: the file handling a backend needs around a build (the engine, the
// timing cache and its lock). POSIX only, independent of TensorRT so it can
// be tested without it. Every failure throws std::runtime_error naming the
// file and the system's reason.
#ifndef TAM_BACKENDS_FILES_H
#define TAM_BACKENDS_FILES_H

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace tam {

namespace detail {

[[noreturn]] inline void fail_errno(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

inline void write_all(int fd, const void* data, size_t size, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno("writing " + path, errno);
    p += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace detail

// make_parent_dirs creates every missing folder above path, like `mkdir -p
// "$(dirname path)"`, so a configured file may name a folder nobody made.
inline void make_parent_dirs(const std::string& path) {
  const auto last_slash = path.rfind('/');
  if (last_slash == std::string::npos || last_slash == 0) return;  // the current folder or the root
  const std::string dir = path.substr(0, last_slash);
  for (size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
    const std::string prefix = dir.substr(0, end);
    if (!prefix.empty() && prefix.back() != '/' && ::mkdir(prefix.c_str(), 0755) != 0) {
      int err = errno;
      struct stat st {};
      if (err != EEXIST) detail::fail_errno("creating folder " + prefix, err);
      if (::stat(prefix.c_str(), &st) != 0) detail::fail_errno("checking folder " + prefix, errno);
      if (!S_ISDIR(st.st_mode)) throw std::runtime_error("creating folder " + prefix + ": a file of that name exists");
    }
    if (end == std::string::npos) return;
  }
}

// write_file writes data to path and fsyncs it, so a completed build is on
// disk before the caller renames it into place. A symbolic link at path is
// an error (O_NOFOLLOW), never followed: the temporary names are
// predictable, and a link planted there must not send the data elsewhere.
inline void write_file(const std::string& path, const void* data, size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) detail::fail_errno("creating " + path, errno);
  try {
    detail::write_all(fd, data, size, path);
    if (::fsync(fd) != 0) detail::fail_errno("syncing " + path, errno);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) detail::fail_errno("closing " + path, errno);
}

// partial_name is a fresh name for a file on its way to path:
// "<path>.partial-<pid>-<n>", the convention of trt-action's own partial
// files (internal/atomicfile/partial.go). The writer's process id lets the
// supervisor tell a temporary whose writer was killed (kill -9 leaves it no
// chance to clean up) from one still being written: before a build that
// names the file, it removes the partial files of processes that are gone.
inline std::string partial_name(const std::string& path) {
  static std::atomic<unsigned long long> seq{0};
  return path + ".partial-" + std::to_string(::getpid()) + "-" + std::to_string(++seq);
}

// replace_file writes data beside path (partial_name) and renames it over
// path, so a reader sees the old file or the new one, never half of one.
// On any failure the temporary file is removed: a full disk must not also
// be left holding a partial copy.
inline void replace_file(const std::string& path, const void* data, size_t size) {
  const std::string tmp = partial_name(path);
  try {
    write_file(tmp, data, size);
    if (::rename(tmp.c_str(), path.c_str()) != 0) detail::fail_errno("replacing " + path, errno);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

// read_file returns the file's bytes, or an empty vector when it does not exist.
inline std::vector<char> read_file(const std::string& path) {
  std::vector<char> out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return out;
    detail::fail_errno("opening " + path, errno);
  }
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      detail::fail_errno("reading " + path, err);
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  ::close(fd);
  return out;
}

// FileLock holds an exclusive flock on path + ".lock" (a separate file,
// because the file itself is replaced by rename). The lock file's folder
// must exist (make_parent_dirs).
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    const std::string lock_path = path + ".lock";
    fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);  // never create through a link
    if (fd_ < 0) detail::fail_errno("opening " + lock_path, errno);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd_);
      detail::fail_errno("locking " + lock_path, err);
    }
  }
  ~FileLock() { ::close(fd_); }  // closing releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace tam

#endif
