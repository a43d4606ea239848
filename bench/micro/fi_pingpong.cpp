// The same ping-pong and streaming test as fabcoll-pingpong, written directly on libfabric
// (RDM endpoint, tagged messages, manual progress, one registered buffer): the baseline that
// fabcoll's fabric path is compared with. Addresses go through fabcoll-run's store.
//   fabcoll-run -n 2 --bind-to core -- fabcoll-fi-pingpong --provider "tcp;ofi_rxm"
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/launcher_store.hpp"

namespace {

void check(int rc, const char* what) {
  if (rc != 0) {
    std::fprintf(stderr, "fi_pingpong: %s: %s\n", what, fi_strerror(-rc));
    std::exit(1);
  }
}

struct Fabric {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;
  fid_mr* mr = nullptr;
  void* desc = nullptr;
  fi_addr_t peer = 0;

  // Waiting as fabcoll's engine waits: poll, and after a run of empty polls yield the core
  // (fabcoll spins 4 us, here 64 empty polls). Without it a rank spinning in fi_cq_read kept
  // the kernel's TCP work off its core and the bare tcp ping-pong came out slower than
  // fabcoll's (10.3 against 6.6 us at 8 B); --spin restores pure busy polling.
  bool spin_only = false;
  void wait(int completions) {
    fi_cq_tagged_entry e[16];
    unsigned idle = 0;
    while (completions > 0) {
      const ssize_t n = fi_cq_read(cq, e, 16);
      if (n > 0) {
        completions -= static_cast<int>(n);
        idle = 0;
      } else if (n == -FI_EAGAIN) {
        if (!spin_only && ++idle >= 64) sched_yield();
      } else {
        fi_cq_err_entry err{};
        fi_cq_readerr(cq, &err, 0);
        std::fprintf(stderr, "fi_pingpong: cq error %s\n", fi_strerror(err.err));
        std::exit(1);
      }
    }
  }
  void send(const void* buf, std::size_t n, std::uint64_t tag) {
    while (fi_tsend(ep, buf, n, desc, peer, tag, nullptr) == -FI_EAGAIN)
      (void)fi_cq_read(cq, nullptr, 0);
  }
  void recv(void* buf, std::size_t n, std::uint64_t tag) {
    while (fi_trecv(ep, buf, n, desc, peer, tag, 0, nullptr) == -FI_EAGAIN)
      (void)fi_cq_read(cq, nullptr, 0);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string provider = "tcp;ofi_rxm";
  std::size_t max_bytes = std::size_t{16} << 20;
  bool spin_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--provider") == 0 && i + 1 < argc)
      provider = argv[++i];
    else if (std::strcmp(argv[i], "--max") == 0 && i + 1 < argc)
      max_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (std::strcmp(argv[i], "--spin") == 0)
      spin_only = true;
    else {
      std::puts(
          "usage: fabcoll-run -n 2 -- fabcoll-fi-pingpong [--provider P] [--max BYTES] [--spin]\n"
          "--spin: busy-poll the completion queue (default: yield the core after 64 empty polls,\n"
          "as fabcoll's engine does)");
      return 0;
    }
  }
  const char* store_addr = std::getenv("FABCOLL_STORE");
  if (store_addr == nullptr) {
    std::fprintf(stderr, "fi_pingpong: run it under fabcoll-run -n 2\n");
    return 1;
  }
  fabcoll::LauncherStore store(store_addr, std::getenv("FABCOLL_SECRET"),
                               std::atoi(std::getenv("FABCOLL_RANK")),
                               std::atoi(std::getenv("FABCOLL_SIZE")), 60);
  const int me = store.rank();
  Fabric f;
  f.spin_only = spin_only;
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_TAGGED;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->domain_attr->av_type = FI_AV_TABLE;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->fabric_attr->prov_name = strdup(provider.c_str());
  check(fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &f.info), "fi_getinfo");
  fi_freeinfo(hints);
  check(fi_fabric(f.info->fabric_attr, &f.fabric, nullptr), "fi_fabric");
  check(fi_domain(f.fabric, f.info, &f.domain, nullptr), "fi_domain");
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.size = 1024;
  check(fi_cq_open(f.domain, &cq_attr, &f.cq, nullptr), "fi_cq_open");
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  check(fi_av_open(f.domain, &av_attr, &f.av, nullptr), "fi_av_open");
  check(fi_endpoint(f.domain, f.info, &f.ep, nullptr), "fi_endpoint");
  check(fi_ep_bind(f.ep, &f.cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
  check(fi_ep_bind(f.ep, &f.av->fid, 0), "fi_ep_bind av");
  check(fi_enable(f.ep), "fi_enable");
  char name[256];
  std::size_t len = sizeof name;
  check(fi_getname(&f.ep->fid, name, &len), "fi_getname");
  store.put("fi/" + std::to_string(me), std::string(name, len));
  const std::string peer_name = store.get("fi/" + std::to_string(1 - me), 60);
  std::vector<fi_addr_t> addrs(1);
  if (fi_av_insert(f.av, peer_name.data(), 1, addrs.data(), 0, nullptr) != 1)
    check(-1, "fi_av_insert");
  f.peer = addrs[0];
  std::vector<char> buf(max_bytes + 64);
  check(fi_mr_reg(f.domain, buf.data(), buf.size(), FI_SEND | FI_RECV, 0, 0, 0, &f.mr, nullptr),
        "fi_mr_reg");
  f.desc = fi_mr_desc(f.mr);
  store.barrier("fi-ready", 60);
  if (me == 0) {
    std::printf("# bare libfabric point-to-point (%s), rank 0 <-> 1\n",
                f.info->fabric_attr->prov_name);
    std::printf("%-10s %14s %16s\n", "# Size", "Latency(us)", "Bandwidth(MB/s)");
  }
  char ack = 0;
  for (std::size_t n = 8; n <= max_bytes; n *= 2) {
    const int iters = n <= 65536 ? 2000 : n <= (1u << 20) ? 200 : 40;
    std::vector<double> lat;
    for (int batch = 0; batch < 6; ++batch) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) {
        if (me == 0) {
          f.send(buf.data(), n, 1);
          f.wait(1);
          f.recv(buf.data(), n, 1);
          f.wait(1);
        } else {
          f.recv(buf.data(), n, 1);
          f.wait(1);
          f.send(buf.data(), n, 1);
          f.wait(1);
        }
      }
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (batch > 0) lat.push_back(us / iters / 2);
    }
    std::sort(lat.begin(), lat.end());
    const int windows = n <= 65536 ? 100 : n <= (1u << 20) ? 10 : 3;
    double mbs = 0;
    for (int rep = 0; rep < 2; ++rep) {  // rep 0 warms up
      const auto t0 = std::chrono::steady_clock::now();
      for (int w = 0; w < windows; ++w) {
        for (int i = 0; i < 64; ++i) {
          if (me == 0)
            f.send(buf.data(), n, 2);
          else
            f.recv(buf.data(), n, 2);
        }
        f.wait(64);
        if (me == 1) {
          f.send(&ack, 1, 3);
        } else {
          f.recv(&ack, 1, 3);
        }
        f.wait(1);
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      mbs = static_cast<double>(n) * 64 * windows / s / 1e6;
    }
    if (me == 0) std::printf("%-10zu %14.2f %16.1f\n", n, lat[lat.size() / 2], mbs);
    std::fflush(stdout);
  }
  store.barrier("fi-done", 60);
  fi_close(&f.mr->fid);
  fi_close(&f.ep->fid);
  fi_close(&f.av->fid);
  fi_close(&f.cq->fid);
  fi_close(&f.domain->fid);
  fi_close(&f.fabric->fid);
  fi_freeinfo(f.info);
  return 0;
}
