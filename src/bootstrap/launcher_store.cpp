#include "bootstrap/launcher_store.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/errors.hpp"

namespace fabcoll {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

Clock::time_point deadline_after(double timeout_s) {
  if (!std::isfinite(timeout_s) || timeout_s > 1e8) timeout_s = 1e8;
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
}

std::string sys_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0 && errno != EINTR) raise(Errc::internal, sys_error("getrandom"));
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : raw) {
    out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xf];
    out += kHex[static_cast<unsigned char>(c) & 0xf];
  }
  return out;
}

// ---- client --------------------------------------------------------------------------------

LauncherStore::LauncherStore(const std::string& address, const std::string& secret, int rank,
                             int size, double timeout_s)
    : rank_(rank), size_(size) {
  sockaddr_storage storage{};
  socklen_t len = 0;
  int family = AF_UNIX;
  if (address.rfind("tcp:", 0) == 0) {
    const auto colon = address.rfind(':');
    const std::string host = address.substr(4, colon - 4);
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<std::uint16_t>(std::atoi(address.c_str() + colon + 1)));
    if (::inet_pton(AF_INET, host.c_str(), &in->sin_addr) != 1)
      raise(Errc::invalid_argument, "bootstrap store: bad address " + address);
    len = sizeof(sockaddr_in);
    family = AF_INET;
  } else {
    const std::string path = address.rfind("unix:", 0) == 0 ? address.substr(5) : address;
    auto* un = reinterpret_cast<sockaddr_un*>(&storage);
    un->sun_family = AF_UNIX;
    if (path.size() >= sizeof un->sun_path)
      raise(Errc::invalid_argument, "bootstrap store: socket path too long: " + path);
    std::memcpy(un->sun_path, path.c_str(), path.size() + 1);
    len = sizeof(sockaddr_un);
  }
  const auto deadline = deadline_after(timeout_s);
  for (;;) {
    fd_ = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) raise(Errc::transport, sys_error("bootstrap store: socket"));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&storage), len) == 0) break;
    ::close(fd_);
    fd_ = -1;
    if (seconds_left(deadline) <= 0)
      raise(Errc::timeout, sys_error(("bootstrap store: cannot connect to " + address).c_str()));
    ::usleep(10000);
  }
  send_all("AUTH " + secret + "\n");
  if (read_line(timeout_s) != "OK")
    raise(Errc::transport, "bootstrap store: the launcher refused our secret");
}

LauncherStore::~LauncherStore() {
  if (fd_ >= 0) ::close(fd_);
}

void LauncherStore::send_all(const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      raise(Errc::peer_failure, sys_error("bootstrap store: lost the launcher"));
    }
    off += static_cast<std::size_t>(n);
  }
}

void LauncherStore::fill(double timeout_s) {
  const auto deadline = deadline_after(timeout_s);
  for (;;) {
    pollfd pfd{fd_, POLLIN, 0};
    const double left = seconds_left(deadline);
    if (left <= 0) raise(Errc::timeout, "bootstrap store: no answer from the launcher");
    const int rc = ::poll(&pfd, 1, static_cast<int>(std::min(left * 1000 + 1, 1000.0)));
    if (rc < 0 && errno != EINTR) raise(Errc::transport, sys_error("bootstrap store: poll"));
    if (rc <= 0) continue;
    char buf[65536];
    const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    if (got == 0) raise(Errc::peer_failure, "bootstrap store: the launcher closed the connection");
    if (got < 0) {
      if (errno == EINTR) continue;
      raise(Errc::peer_failure, sys_error("bootstrap store: recv"));
    }
    buffered_.append(buf, static_cast<std::size_t>(got));
    return;
  }
}

std::string LauncherStore::read_bytes(std::size_t n, double timeout_s) {
  const auto deadline = deadline_after(timeout_s);
  while (buffered_.size() < n) fill(seconds_left(deadline));
  std::string out = buffered_.substr(0, n);
  buffered_.erase(0, n);
  return out;
}

std::string LauncherStore::read_line(double timeout_s) {
  const auto deadline = deadline_after(timeout_s);
  for (;;) {
    const auto nl = buffered_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return line;
    }
    fill(seconds_left(deadline));
  }
}

void LauncherStore::put(const std::string& key, const std::string& value) {
  if (key.find_first_of(" \n") != std::string::npos)
    raise(Errc::invalid_argument, "bootstrap store: key with a space or newline: " + key);
  send_all("PUT " + key + " " + std::to_string(value.size()) + "\n" + value);
  if (read_line(60) != "OK") raise(Errc::transport, "bootstrap store: PUT refused for " + key);
}

std::string LauncherStore::get(const std::string& key, double timeout_s) {
  send_all("GET " + key + "\n");
  std::string line;
  try {
    line = read_line(timeout_s);
  } catch (const EngineError& e) {
    if (e.errc() == Errc::timeout)
      raise(Errc::timeout, "bootstrap store: key '" + key + "' did not appear within " +
                               std::to_string(timeout_s) + " s");
    throw;
  }
  if (line.rfind("VAL ", 0) != 0) raise(Errc::transport, "bootstrap store: bad answer " + line);
  const auto n = static_cast<std::size_t>(std::strtoull(line.c_str() + 4, nullptr, 10));
  return read_bytes(n, timeout_s);
}

// ---- server --------------------------------------------------------------------------------

StoreServer::StoreServer(std::string secret, const std::string& tcp_host)
    : secret_(std::move(secret)) {
  if (!tcp_host.empty()) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) raise(Errc::internal, sys_error("socket"));
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = 0;  // ephemeral
    if (::inet_pton(AF_INET, tcp_host.c_str(), &in.sin_addr) != 1)
      raise(Errc::invalid_argument, "bootstrap store: bad host address " + tcp_host);
    socklen_t len = sizeof in;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&in), sizeof in) != 0 ||
        ::listen(listen_fd_, 1024) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&in), &len) != 0)
      raise(Errc::internal, sys_error("bind/listen on the store's TCP socket"));
    address_ = "tcp:" + tcp_host + ":" + std::to_string(ntohs(in.sin_port));
    return;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string templ =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/fabcoll-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) raise(Errc::internal, sys_error("mkdtemp"));
  dir_ = templ;  // mkdtemp makes it 0700: only this user can reach the socket
  path_ = dir_ + "/store.sock";
  address_ = "unix:" + path_;
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) raise(Errc::internal, sys_error("socket"));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 1024) != 0)
    raise(Errc::internal, sys_error("bind/listen on the store socket"));
}

StoreServer::~StoreServer() {
  for (const Client& c : clients_) ::close(c.fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (!path_.empty()) {
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
}

StoreServerThread::StoreServerThread(std::string secret, const std::string& tcp_host)
    : server_(std::move(secret), tcp_host) {
  thread_ = std::thread([this] {
    while (!stop_.load(std::memory_order_relaxed)) server_.serve(20);
  });
}

StoreServerThread::~StoreServerThread() {
  stop_.store(true);
  thread_.join();
}

void StoreServer::answer_waiting(Client& c) {
  // Answers are sent in request order: stop at the first key that is still missing.
  while (!c.waiting.empty()) {
    const auto it = kv_.find(c.waiting.front());
    if (it == kv_.end()) return;
    const std::string msg = "VAL " + std::to_string(it->second.size()) + "\n" + it->second;
    std::size_t off = 0;
    while (off < msg.size()) {
      const ssize_t n = ::send(c.fd, msg.data() + off, msg.size() - off, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
          pollfd pfd{c.fd, POLLOUT, 0};
          ::poll(&pfd, 1, 100);
          continue;
        }
        return;  // client gone; it will be dropped on the next read
      }
      off += static_cast<std::size_t>(n);
    }
    c.waiting.erase(c.waiting.begin());
  }
}

void StoreServer::handle(Client& c) {
  for (;;) {
    const auto nl = c.in.find('\n');
    if (nl == std::string::npos) return;
    const std::string line = c.in.substr(0, nl);
    if (!c.authed) {
      if (line != "AUTH " + secret_) {
        ::shutdown(c.fd, SHUT_RDWR);
        c.in.clear();
        return;
      }
      c.authed = true;
      c.in.erase(0, nl + 1);
      (void)::send(c.fd, "OK\n", 3, MSG_NOSIGNAL);
      continue;
    }
    if (line.rfind("PUT ", 0) == 0) {
      const auto sp = line.find(' ', 4);
      if (sp == std::string::npos) return;
      const std::string key = line.substr(4, sp - 4);
      const auto n = static_cast<std::size_t>(std::strtoull(line.c_str() + sp + 1, nullptr, 10));
      if (c.in.size() < nl + 1 + n) return;  // wait for the value bytes
      kv_[key] = c.in.substr(nl + 1, n);
      c.in.erase(0, nl + 1 + n);
      (void)::send(c.fd, "OK\n", 3, MSG_NOSIGNAL);
      for (Client& other : clients_) answer_waiting(other);
      continue;
    }
    if (line.rfind("GET ", 0) == 0) {
      c.waiting.push_back(line.substr(4));
      c.in.erase(0, nl + 1);
      answer_waiting(c);
      continue;
    }
    ::shutdown(c.fd, SHUT_RDWR);  // protocol violation
    c.in.clear();
    return;
  }
}

void StoreServer::serve(int timeout_ms) {
  std::vector<pollfd> fds;
  fds.push_back({listen_fd_, POLLIN, 0});
  for (const Client& c : clients_) fds.push_back({c.fd, POLLIN, 0});
  for (const int fd : extra_) fds.push_back({fd, POLLIN, 0});
  readable_.clear();
  const int rc = ::poll(fds.data(), fds.size(), timeout_ms);
  if (rc <= 0) return;
  const std::size_t nclients = clients_.size();
  for (std::size_t i = 0; i < extra_.size(); ++i)
    if (fds[1 + nclients + i].revents != 0) readable_.push_back(extra_[i]);
  std::vector<std::size_t> dead;
  for (std::size_t i = 0; i < nclients; ++i) {
    if (fds[1 + i].revents == 0) continue;
    char buf[65536];
    const ssize_t n = ::recv(clients_[i].fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      dead.push_back(i);
      continue;
    }
    clients_[i].in.append(buf, static_cast<std::size_t>(n));
    handle(clients_[i]);
  }
  for (auto it = dead.rbegin(); it != dead.rend(); ++it) {
    ::close(clients_[*it].fd);
    clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(*it));
  }
  if (fds[0].revents != 0) {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) break;
      Client c;
      c.fd = fd;
      clients_.push_back(std::move(c));
    }
  }
}

}  // namespace fabcoll
