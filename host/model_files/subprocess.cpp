// host/model_files/subprocess.cpp — run_process (subprocess.hpp) on POSIX: posix_spawn with three pipes,
// drained with poll().
#include "host/model_files/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace lockstep::model_files {

namespace {

struct pipe_pair {
  int read_end = -1, write_end = -1;
  pipe_pair() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
    read_end = fds[0];
    write_end = fds[1];
  }
  ~pipe_pair() { close_both(); }
  pipe_pair(const pipe_pair&) = delete;
  pipe_pair& operator=(const pipe_pair&) = delete;
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  void close_both() {
    close_fd(read_end);
    close_fd(write_end);
  }
};

}  // namespace

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    if (!line.empty()) line += ' ';
    const bool plain = !a.empty() && a.find_first_of(" \t\"'\\$`") == std::string::npos;
    line += plain ? a : "'" + a + "'";
  }
  return line;
}

process_result run_process(const std::vector<std::string>& argv, const std::string& input, bool merge_stderr) {
  if (argv.empty()) throw std::invalid_argument("run_process: no program");
  pipe_pair in, out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read_end, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write_end, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, merge_stderr ? out.write_end : err.write_end, STDERR_FILENO);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw std::runtime_error("cannot run '" + argv[0] + "': " + std::strerror(spawned));

  // The parent keeps only its ends; the child's copies close on exec (O_CLOEXEC) after dup2.
  pipe_pair::close_fd(in.read_end);
  pipe_pair::close_fd(out.write_end);
  pipe_pair::close_fd(err.write_end);
  if (merge_stderr) pipe_pair::close_fd(err.read_end);

  // A child that exits without reading its input must not kill us with SIGPIPE. A write to a closed
  // pipe raises the signal at the writing thread: blocked in this thread and taken back below, it
  // changes neither the process's disposition nor other threads' (compiles run from several threads
  // at once, model_compiler.cpp), as a process-wide SIG_IGN saved and restored around the call would.
  sigset_t pipe_signal, previous_mask;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous_mask);
  bool raised_sigpipe = false;

  process_result result;
  std::size_t written = 0;
  if (input.empty()) pipe_pair::close_fd(in.write_end);
  else fcntl(in.write_end, F_SETFL, O_NONBLOCK);
  char buffer[65536];
  for (;;) {
    pollfd fds[3];
    int count = 0;
    if (out.read_end >= 0) fds[count++] = {out.read_end, POLLIN, 0};
    if (err.read_end >= 0) fds[count++] = {err.read_end, POLLIN, 0};
    if (in.write_end >= 0) fds[count++] = {in.write_end, POLLOUT, 0};
    if (count == 0) break;
    if (poll(fds, count, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in.write_end) {
        const ssize_t w = ::write(in.write_end, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
          raised_sigpipe = raised_sigpipe || errno == EPIPE;
          written = input.size();  // the child closed its input
        }
        if (written == input.size()) pipe_pair::close_fd(in.write_end);
        continue;
      }
      const ssize_t r = ::read(fds[i].fd, buffer, sizeof buffer);
      if (r > 0) {
        (fds[i].fd == out.read_end ? result.output : result.errors).append(buffer, static_cast<std::size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        pipe_pair::close_fd(fds[i].fd == out.read_end ? out.read_end : err.read_end);
      }
    }
  }
  if (raised_sigpipe && sigismember(&previous_mask, SIGPIPE) == 0) {
    const timespec no_wait{0, 0};
    while (sigtimedwait(&pipe_signal, nullptr, &no_wait) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return result;
}

}  // namespace lockstep::model_files
