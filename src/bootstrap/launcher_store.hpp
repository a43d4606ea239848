// The embedded launcher's store: fabcoll-run serves a key-value store on a Unix socket in a
// private (0700) directory; ranks find it through FABCOLL_STORE and prove they belong to the
// job with the random per-job secret in FABCOLL_SECRET.
//
// Wire protocol (one connection per rank, requests answered in order):
//   client: "AUTH <secret>\n"                      server: "OK\n" (or closes)
//   client: "PUT <key> <len>\n" <len bytes>        server: "OK\n"
//   client: "GET <key>\n"                          server: "VAL <len>\n" <len bytes> once the key
//   exists
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.hpp"

namespace fabcoll {

class LauncherStore final : public Store {
 public:
  /// Connects to `address` ("unix:/path", a bare path, or "tcp:host:port") and
  /// authenticates; throws EngineError on failure.
  LauncherStore(const std::string& address, const std::string& secret, int rank, int size,
                double timeout_s);
  ~LauncherStore() override;
  LauncherStore(const LauncherStore&) = delete;
  LauncherStore& operator=(const LauncherStore&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  void put(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, double timeout_s) override;

 private:
  void send_all(const std::string& data);
  void fill(double timeout_s);  // appends at least one byte read from the socket
  std::string read_line(double timeout_s);
  std::string read_bytes(std::size_t n, double timeout_s);
  int fd_ = -1;
  int rank_;
  int size_;
  std::string buffered_;
};

/// The server side, run by fabcoll-run: single-threaded, driven by poll().
class StoreServer {
 public:
  /// Listens on a Unix socket in a new private (0700) directory, or, with tcp_host set, on
  /// an ephemeral TCP port of that host address (for ranks on several machines).
  explicit StoreServer(std::string secret, const std::string& tcp_host = "");
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  /// What clients connect to: "unix:/path" or "tcp:host:port".
  [[nodiscard]] const std::string& address() const { return address_; }
  /// Serves requests for up to timeout_ms milliseconds (one poll round).
  void serve(int timeout_ms);
  /// Extra descriptors the caller wants polled too; returns those readable after serve().
  void watch(int fd) { extra_.push_back(fd); }
  [[nodiscard]] const std::vector<int>& readable() const { return readable_; }

 private:
  struct Client {
    int fd = -1;
    bool authed = false;
    std::string in;
    std::vector<std::string> waiting;  // keys this client waits for, in request order
  };
  void handle(Client& c);
  void answer_waiting(Client& c);
  std::string secret_;
  std::string dir_;
  std::string path_;
  std::string address_;
  int listen_fd_ = -1;
  std::vector<Client> clients_;
  std::map<std::string, std::string> kv_;
  std::vector<int> extra_;
  std::vector<int> readable_;
};

/// A StoreServer served by a background thread (rank 0 of jobs not started by fabcoll-run).
class StoreServerThread {
 public:
  explicit StoreServerThread(std::string secret, const std::string& tcp_host = "");
  ~StoreServerThread();
  StoreServerThread(const StoreServerThread&) = delete;
  StoreServerThread& operator=(const StoreServerThread&) = delete;
  [[nodiscard]] const std::string& address() const { return server_.address(); }

 private:
  StoreServer server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// 32 random hex characters from the kernel (getrandom).
std::string random_hex(std::size_t bytes = 16);

}  // namespace fabcoll
