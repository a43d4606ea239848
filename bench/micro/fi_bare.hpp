// A bare libfabric RDM endpoint (tagged messages, manual progress, one registered buffer): the
// baseline that fabcoll's fabric path is compared with, in fabcoll-fi-pingpong and beside
// fabcoll in fabcoll-pingpong --compare-bare. The ping-pong and streaming loops are the same
// ones that fabcoll-pingpong runs over fabcoll.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sched.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "transports/ofi/ofi.hpp"

namespace fabcoll::bench {

class BareFabric {
 public:
  /// Opens an endpoint of `provider` (a libfabric provider string, e.g. "tcp;ofi_rxm") and
  /// registers [buf, buf + len). Exits with a message on any failure (a benchmark tool).
  BareFabric(const std::string& provider, void* buf, std::size_t len, bool spin_only)
      : spin_only_(spin_only) {
    // The provider parameters fabcoll's endpoint runs with (a like-for-like comparison).
    fabcoll::ofi::apply_provider_defaults();
    fi_info* hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->av_type = FI_AV_TABLE;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->fabric_attr->prov_name = strdup(provider.c_str());
    check(fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info_), "fi_getinfo");
    fi_freeinfo(hints);
    check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric");
    check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain");
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 1024;
    check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), "fi_cq_open");
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    check(fi_av_open(domain_, &av_attr, &av_, nullptr), "fi_av_open");
    check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint");
    check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
    check(fi_ep_bind(ep_, &av_->fid, 0), "fi_ep_bind av");
    check(fi_enable(ep_), "fi_enable");
    check(fi_mr_reg(domain_, buf, len, FI_SEND | FI_RECV, 0, 0, 0, &mr_, nullptr), "fi_mr_reg");
    desc_ = fi_mr_desc(mr_);
    check(
        fi_mr_reg(domain_, ack_.data(), ack_.size(), FI_SEND | FI_RECV, 0, 1, 0, &ack_mr_, nullptr),
        "fi_mr_reg(ack)");
    ack_desc_ = fi_mr_desc(ack_mr_);
    kick_ = std::strcmp(info_->fabric_attr->prov_name, "sockets") == 0;
  }
  BareFabric(const BareFabric&) = delete;
  BareFabric& operator=(const BareFabric&) = delete;
  ~BareFabric() {
    fi_close(&ack_mr_->fid);
    fi_close(&mr_->fid);
    fi_close(&ep_->fid);
    fi_close(&av_->fid);
    fi_close(&cq_->fid);
    fi_close(&domain_->fid);
    fi_close(&fabric_->fid);
    fi_freeinfo(info_);
  }

  [[nodiscard]] const char* provider() const { return info_->fabric_attr->prov_name; }
  /// This endpoint's address, to hand to the peer.
  [[nodiscard]] std::string name() const {
    char name[256];
    std::size_t len = sizeof name;
    check(fi_getname(&ep_->fid, name, &len), "fi_getname");
    return {name, len};
  }
  void connect(const std::string& peer_name) {
    if (fi_av_insert(av_, peer_name.data(), 1, &peer_, 0, nullptr) != 1)
      check(-FI_EINVAL, "fi_av_insert");
  }

  // Waiting as fabcoll's engine waits: poll, and after a run of empty polls yield the core
  // (fabcoll spins 4 us, here 64 empty polls). Without it a rank spinning in fi_cq_read kept
  // the kernel's TCP work off its core and the bare tcp ping-pong came out slower than
  // fabcoll's (10.3 against 6.6 us at 8 B); spin_only restores pure busy polling.
  void wait(int completions) {
    fi_cq_tagged_entry e[16];
    unsigned idle = 0;
    while (completions > 0) {
      const ssize_t n = fi_cq_read(cq_, e, 16);
      if (n > 0) {
        completions -= static_cast<int>(n);
        idle = 0;
      } else if (n == -FI_EAGAIN) {
        if (!spin_only_ && ++idle >= 64) sched_yield();
      } else {
        fi_cq_err_entry err{};
        fi_cq_readerr(cq_, &err, 0);
        std::fprintf(stderr, "bare libfabric: cq error %s\n", fi_strerror(err.err));
        std::exit(1);
      }
    }
  }
  /// buf lies in the registered buffer (desc), or is the ack byte (its own registration).
  void send(const void* buf, std::size_t n, std::uint64_t tag) {
    void* const desc = buf == ack_.data() ? ack_desc_ : desc_;
    while (fi_tsend(ep_, buf, n, desc, peer_, tag, next_context()) == -FI_EAGAIN)
      (void)fi_cq_read(cq_, nullptr, 0);
  }
  void recv(void* buf, std::size_t n, std::uint64_t tag) {
    void* const desc = buf == ack_.data() ? ack_desc_ : desc_;
    while (fi_trecv(ep_, buf, n, desc, peer_, tag, 0, next_context()) == -FI_EAGAIN)
      (void)fi_cq_read(cq_, nullptr, 0);
  }

  /// As fabcoll's ofi transport does on sockets when a collective ends (ofi.cpp, kick): its
  /// completed sends may still sit in its queue, and one more read runs its progress engine.
  void kick() {
    if (kick_)
      for (int i = 0; i < 3; ++i) (void)fi_cq_read(cq_, nullptr, 0);
  }

  /// `iters` round trips of n bytes between ranks 0 and 1 (me is 0 or 1).
  void ping_pong(int me, void* buf, std::size_t n, int iters) {
    for (int i = 0; i < iters; ++i) {
      if (me == 0) {
        send(buf, n, 1);
        wait(1);
        recv(buf, n, 1);
        wait(1);
      } else {
        recv(buf, n, 1);
        wait(1);
        send(buf, n, 1);
        wait(1);
      }
    }
    kick();
  }
  /// Rank 0 streams `windows` windows of `window` messages; rank 1 acks each window (1 byte).
  void stream(int me, void* buf, std::size_t n, int windows, int window) {
    for (int w = 0; w < windows; ++w) {
      for (int i = 0; i < window; ++i) {
        if (me == 0)
          send(buf, n, 2);
        else
          recv(buf, n, 2);
      }
      wait(window);
      if (me == 1)
        send(ack_.data(), 1, 3);
      else
        recv(ack_.data(), 1, 3);
      wait(1);
    }
    kick();
  }

 private:
  static void check(int rc, const char* what) {
    if (rc != 0) {
      std::fprintf(stderr, "bare libfabric: %s: %s\n", what, fi_strerror(-rc));
      std::exit(1);
    }
  }

  /// Operation contexts for providers that ask for FI_CONTEXT/FI_CONTEXT2 storage: at most a
  /// window (64) plus an ack are in flight, so a ring of 256 is never reused while in use.
  fi_context2* next_context() { return &contexts_[next_++ % contexts_.size()]; }

  std::array<fi_context2, 256> contexts_{};
  std::array<char, 64> ack_{};  // the streams' 1-byte acks, registered on their own
  fid_mr* ack_mr_ = nullptr;
  void* ack_desc_ = nullptr;
  std::size_t next_ = 0;
  bool spin_only_ = false;
  bool kick_ = false;  // sockets: progress once more at the end of a loop (kick)
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;
  fid_mr* mr_ = nullptr;
  void* desc_ = nullptr;
  fi_addr_t peer_ = 0;
};

}  // namespace fabcoll::bench
