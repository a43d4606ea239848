// The embedded launcher's store: fabcoll-run serves a key-value store on a Unix socket in a
// private (0700) directory; ranks find it through FABCOLL_STORE and prove they belong to the
// job with the random per-job secret in FABCOLL_SECRET.
//
// Wire protocol (one connection per rank, requests answered in order):
//   client: "AUTH <secret>\n"                      server: "OK\n" (or closes)
//   client: "PUT <key> <len>\n" <len bytes>        server: "OK\n"
//   client: "GET <key>\n"                          server: "VAL <len>\n" <len bytes> once the key exists
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bootstrap/store.hpp"

namespace fabcoll {

class LauncherStore final : public Store {
 public:
  /// Connects to the socket at `path` and authenticates; throws EngineError on failure.
  LauncherStore(const std::string& path, const std::string& secret, int rank, int size,
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
  /// Creates a private directory and a listening socket in it.
  explicit StoreServer(std::string secret);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
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
  int listen_fd_ = -1;
  std::vector<Client> clients_;
  std::map<std::string, std::string> kv_;
  std::vector<int> extra_;
  std::vector<int> readable_;
};

/// 32 random hex characters from the kernel (getrandom).
std::string random_hex(std::size_t bytes = 16);

}  // namespace fabcoll
