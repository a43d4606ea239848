#include "tuning/tuning_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
#include <thread>

#include "fabcoll/fabcoll.h"

namespace fabcoll::tuning {

using nlohmann::json;

std::string fabcoll_version() {
  return std::to_string(FABCOLL_VERSION_MAJOR) + "." + std::to_string(FABCOLL_VERSION_MINOR) + "." +
         std::to_string(FABCOLL_VERSION_PATCH);
}

Fingerprint this_machine(std::string provider) {
  Fingerprint fp;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) fp.hostname = host;
  fp.cores = static_cast<int>(std::thread::hardware_concurrency());
  fp.provider = std::move(provider);
  fp.fabcoll_version = fabcoll_version();
  return fp;
}

std::string to_json_text(const TuningFile& f) {
  json j;
  j["format"] = kFormat;
  j["schema_version"] = f.schema_version;
  j["created"] = f.created;
  j["machine"] = {{"hostname", f.machine.hostname},
                  {"cores", f.machine.cores},
                  {"provider", f.machine.provider},
                  {"fabcoll_version", f.machine.fabcoll_version}};
  j["links"] = json::array();
  for (const LinkParams& l : f.links) {
    json link = {{"class", l.link_class},
                 {"alpha", l.model.alpha},
                 {"beta", l.model.beta},
                 {"gamma", l.model.gamma},
                 {"r2", l.r2},
                 {"points", l.points},
                 {"break_bytes", l.break_bytes},
                 {"alpha_above", l.alpha_above},
                 {"beta_above", l.beta_above},
                 {"local_ranks", l.local_ranks},
                 {"layout", layout_name(l.local_ranks, f.machine.cores, l.mapping)}};
    if (!l.mapping.empty()) link["mapping"] = l.mapping;
    // Only when measured: an absent key reads back as "not measured" (o = α).
    if (l.model.overhead >= 0) link["overhead"] = l.model.overhead;
    if (l.model.receive_overhead >= 0) link["receive_overhead"] = l.model.receive_overhead;
    if (l.model.gap >= 0) link["gap"] = l.model.gap;
    link["written"] = l.model.written;
    if (l.model.pull_fanout > 0) link["pull_fanout"] = l.model.pull_fanout;
    link["exchange_alpha"] = l.model.exchange_alpha;
    link["exchange_beta"] = l.model.exchange_beta;
    if (l.model.ring_exchange_beta >= 0) link["ring_exchange_beta"] = l.model.ring_exchange_beta;
    if (l.model.wake > 0) link["wake"] = l.model.wake;
    if (l.model.has_large()) {
      link["large_from"] = l.model.large_from;
      link["beta_large"] = l.model.beta_large;
    }
    if (l.model.has_gamma_large()) {
      link["gamma_large_from"] = l.model.gamma_large_from;
      link["gamma_large"] = l.model.gamma_large;
    }
    if (l.model.streamed != 1) link["streamed"] = l.model.streamed;
    if (l.model.has_small()) {
      link["small_below"] = l.model.small_below;
      link["alpha_small"] = l.model.alpha_small;
      if (l.model.overhead_small >= 0) link["overhead_small"] = l.model.overhead_small;
      if (l.model.call_wake_small >= 0) link["call_wake_small"] = l.model.call_wake_small;
    }
    if (l.exchange_alpha_above > 0) link["exchange_alpha_above"] = l.exchange_alpha_above;
    if (l.model.call_wake > 0) link["call_wake"] = l.model.call_wake;
    if (l.call_wake_above > 0) link["call_wake_above"] = l.call_wake_above;
    j["links"].push_back(std::move(link));
  }
  j["gamma"] = json::array();
  for (const GammaEntry& g : f.gammas)
    j["gamma"].push_back({{"op", g.op}, {"datatype", g.datatype}, {"gamma", g.gamma}});
  j["k_rules"] = json::array();
  for (const KRule& k : f.k_rules) {
    json sizes = json::array();
    for (const auto& [n, kk] : k.sizes) sizes.push_back({n, kk});
    j["k_rules"].push_back({{"collective", k.collective},
                            {"algorithm", k.algorithm},
                            {"p", k.p},
                            {"link", k.link},
                            {"sizes", sizes}});
  }
  j["crossovers"] = json::array();
  for (const CrossoverEntry& c : f.crossovers) {
    json segs = json::array();
    for (const auto& s : c.segments)
      segs.push_back({{"algorithm", s.algorithm}, {"lo", s.lo}, {"hi", s.hi}});
    j["crossovers"].push_back(
        {{"collective", c.collective}, {"p", c.p}, {"link", c.link}, {"segments", segs}});
  }
  json v = json::parse(f.validation_json, nullptr, false);
  j["validation"] = v.is_discarded() ? json::object() : v;
  return j.dump(2) + "\n";
}

std::optional<TuningFile> parse_tuning(std::string_view text, std::string& error) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    error = "not valid JSON";
    return std::nullopt;
  }
  if (!j.is_object() || j.value("format", std::string()) != kFormat) {
    error = "not a fabcoll tuning file (\"format\" is not \"fabcoll-tuning\")";
    return std::nullopt;
  }
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer() ||
      j["schema_version"].get<int>() < kOldestSchemaVersion ||
      j["schema_version"].get<int>() > kSchemaVersion) {
    error = "schema_version " +
            (j.contains("schema_version") ? j["schema_version"].dump() : std::string("missing")) +
            ", this build reads " + std::to_string(kOldestSchemaVersion) + " to " +
            std::to_string(kSchemaVersion);
    return std::nullopt;
  }
  // Field access below can throw on wrong types (json::type_error); report it as one line.
  try {
    TuningFile f;
    f.schema_version = kSchemaVersion;  // a version 1 file is read as version 2
    f.created = j.value("created", std::string());
    const json& m = j.at("machine");
    f.machine.hostname = m.at("hostname").get<std::string>();
    f.machine.cores = m.at("cores").get<int>();
    f.machine.provider = m.value("provider", std::string());
    f.machine.fabcoll_version = m.value("fabcoll_version", std::string());
    for (const json& l : j.value("links", json::array())) {
      LinkParams p;
      p.link_class = l.at("class").get<std::string>();
      p.model.alpha = l.at("alpha").get<double>();
      p.model.beta = l.at("beta").get<double>();
      p.model.gamma = l.value("gamma", CostModel{}.gamma);
      p.r2 = l.value("r2", 0.0);
      p.points = l.value("points", 0);
      p.break_bytes = l.value("break_bytes", 0.0);
      p.alpha_above = l.value("alpha_above", p.model.alpha);
      p.beta_above = l.value("beta_above", p.model.beta);
      p.local_ranks = l.value("local_ranks", 0);      // absent in version 1: quiet
      p.mapping = l.value("mapping", std::string());  // absent: not known
      // The sender's overhead o (optional, absent in files made before it was measured):
      // absent or negative = not measured, o = α.
      p.model.overhead = l.value("overhead", -1.0);
      if (std::isnan(p.model.overhead)) {
        error = "link " + p.link_class + ": NaN overhead";
        return std::nullopt;
      }
      if (p.model.overhead < 0) p.model.overhead = -1;
      // The receiver's o_r likewise (absent in files made before it was fitted: o_r = o).
      p.model.receive_overhead = l.value("receive_overhead", -1.0);
      if (std::isnan(p.model.receive_overhead)) {
        error = "link " + p.link_class + ": NaN receive_overhead";
        return std::nullopt;
      }
      if (p.model.receive_overhead < 0) p.model.receive_overhead = -1;
      // The sender's time per byte G (optional, absent in files made before it was measured):
      // absent or negative = not measured, G = β.
      p.model.gap = l.value("gap", -1.0);
      if (std::isnan(p.model.gap)) {
        error = "link " + p.link_class + ": NaN gap";
        return std::nullopt;
      }
      if (p.model.gap < 0) p.model.gap = -1;
      // ω (optional, absent in files made before it was measured): 1, the texts' model.
      p.model.written = l.value("written", 1.0);
      if (!(p.model.written >= 1) || !std::isfinite(p.model.written)) {
        error = "link " + p.link_class + ": written must be a number >= 1";
        return std::nullopt;
      }
      // φ (optional, absent where not measured): 0, pulls side by side.
      p.model.pull_fanout = l.value("pull_fanout", 0.0);
      if (!(p.model.pull_fanout >= 0) || !std::isfinite(p.model.pull_fanout)) {
        error = "link " + p.link_class + ": pull_fanout must be a number >= 0";
        return std::nullopt;
      }
      // χα, χβ (optional, absent in files made before they were measured): 1, the texts' model.
      p.model.exchange_alpha = l.value("exchange_alpha", 1.0);
      p.model.exchange_beta = l.value("exchange_beta", 1.0);
      for (const double x : {p.model.exchange_alpha, p.model.exchange_beta}) {
        if (!(x >= kExchangeMin && x <= kExchangeFileMax)) {
          error = "link " + p.link_class +
                  ": exchange_alpha and exchange_beta must be numbers in [" +
                  std::to_string(kExchangeMin) + ", " + std::to_string(kExchangeFileMax) + "]";
          return std::nullopt;
        }
      }
      // β_x (optional, absent where not measured): -1, χβ·β.
      if (const auto it = l.find("ring_exchange_beta"); it != l.end()) {
        p.model.ring_exchange_beta = it->is_number() ? it->get<double>() : -1.0;
        if (!(p.model.ring_exchange_beta >= 0) || !std::isfinite(p.model.ring_exchange_beta)) {
          error = "link " + p.link_class + ": ring_exchange_beta must be a number >= 0";
          return std::nullopt;
        }
      }
      // χα above the break (optional, absent where not fitted apart): exchange_alpha.
      if (const auto it = l.find("exchange_alpha_above"); it != l.end()) {
        p.exchange_alpha_above = it->is_number() ? it->get<double>() : -1.0;
        if (!(p.exchange_alpha_above >= kExchangeMin &&
              p.exchange_alpha_above <= kExchangeFileMax)) {
          error = "link " + p.link_class + ": exchange_alpha_above must be a number in [" +
                  std::to_string(kExchangeMin) + ", " + std::to_string(kExchangeFileMax) + "]";
          return std::nullopt;
        }
      }
      // K (optional, absent where not fitted): 0.
      if (const auto it = l.find("call_wake"); it != l.end())
        p.model.call_wake = it->is_number() ? it->get<double>() : -1.0;
      if (!(p.model.call_wake >= 0) || !std::isfinite(p.model.call_wake)) {
        error = "link " + p.link_class + ": call_wake must be a number >= 0";
        return std::nullopt;
      }
      // K above the break (optional, absent where not fitted): 0.
      if (const auto it = l.find("call_wake_above"); it != l.end())
        p.call_wake_above = it->is_number() ? it->get<double>() : -1.0;
      if (!(p.call_wake_above >= 0) || !std::isfinite(p.call_wake_above)) {
        error = "link " + p.link_class + ": call_wake_above must be a number >= 0";
        return std::nullopt;
      }
      // W (optional, absent where not fitted): 0, the texts' model.
      p.model.wake = l.value("wake", 0.0);
      if (!(p.model.wake >= 0) || !std::isfinite(p.model.wake)) {
        error = "link " + p.link_class + ": wake must be a number >= 0";
        return std::nullopt;
      }
      // The number > 0 at key, into out (false: absent, not a number, or not > 0).
      const auto positive = [&](const char* key, double& out) {
        const auto it = l.find(key);
        if (it == l.end() || !it->is_number() || !(it->get<double>() > 0) ||
            !std::isfinite(it->get<double>()))
          return false;
        out = it->get<double>();
        return true;
      };
      // A pair of optional keys that go together: both or neither, each a number > 0.
      const auto pair = [&](const char* first, double& a, const char* second, double& b) {
        if (!l.contains(first) && !l.contains(second)) return true;
        if (positive(first, a) && positive(second, b)) return true;
        error = "link " + p.link_class + ": " + first + " and " + second +
                " must both be given, as numbers > 0";
        return false;
      };
      // β beyond the cache (optional, absent where not fitted): both keys or neither.
      if (!pair("large_from", p.model.large_from, "beta_large", p.model.beta_large))
        return std::nullopt;
      // γ beyond the cache (optional, absent where not measured): both keys or neither.
      if (!pair("gamma_large_from", p.model.gamma_large_from, "gamma_large", p.model.gamma_large))
        return std::nullopt;
      // α of small messages (optional, absent where not fitted): both keys or neither, below
      // the break.
      if (!pair("small_below", p.model.small_below, "alpha_small", p.model.alpha_small))
        return std::nullopt;
      if (p.model.has_small()) {
        if (p.break_bytes > 0 && p.model.small_below >= p.break_bytes) {
          error = "link " + p.link_class + ": small_below must lie below break_bytes";
          return std::nullopt;
        }
      }
      // o and K of small messages (optional, with small_below only; absent or negative: o, K).
      const auto small_key = [&](const char* key, double& value) {
        const auto it = l.find(key);
        if (it == l.end()) return true;
        value = it->is_number() ? it->get<double>() : std::nan("");
        if (!std::isfinite(value) || !p.model.has_small()) {
          error = "link " + p.link_class + ": " + key +
                  " must be a number, and only with small_below and alpha_small";
          return false;
        }
        if (value < 0) value = -1;
        return true;
      };
      if (!small_key("overhead_small", p.model.overhead_small) ||
          !small_key("call_wake_small", p.model.call_wake_small))
        return std::nullopt;
      // κ (optional, absent where not fitted): 1, the texts' model.
      if (const auto it = l.find("streamed"); it != l.end())
        p.model.streamed = it->is_number() ? it->get<double>() : -1.0;
      if (!(p.model.streamed > 0) || !std::isfinite(p.model.streamed)) {
        error = "link " + p.link_class + ": streamed must be a number > 0";
        return std::nullopt;
      }
      if (p.local_ranks < 0) {
        error = "link " + p.link_class + ": negative local_ranks";
        return std::nullopt;
      }
      if (!(p.model.alpha >= 0) || !(p.model.beta >= 0) || !(p.model.gamma >= 0)) {
        error = "link " + p.link_class + ": negative or NaN alpha/beta/gamma";
        return std::nullopt;
      }
      f.links.push_back(std::move(p));
    }
    for (const json& g : j.value("gamma", json::array()))
      f.gammas.push_back({g.at("op").get<std::string>(), g.at("datatype").get<std::string>(),
                          g.at("gamma").get<double>()});
    for (const json& k : j.value("k_rules", json::array())) {
      KRule r;
      r.collective = k.at("collective").get<std::string>();
      r.algorithm = k.at("algorithm").get<std::string>();
      r.p = k.at("p").get<int>();
      r.link = k.value("link", std::string());
      for (const json& s : k.at("sizes"))
        r.sizes.emplace_back(s.at(0).get<double>(), s.at(1).get<double>());
      f.k_rules.push_back(std::move(r));
    }
    for (const json& c : j.value("crossovers", json::array())) {
      CrossoverEntry e;
      e.collective = c.at("collective").get<std::string>();
      e.p = c.at("p").get<int>();
      e.link = c.value("link", std::string());
      for (const json& s : c.at("segments"))
        e.segments.push_back({s.at("algorithm").get<std::string>(), s.at("lo").get<double>(),
                              s.at("hi").get<double>()});
      f.crossovers.push_back(std::move(e));
    }
    if (j.contains("validation")) f.validation_json = j["validation"].dump();
    return f;
  } catch (const json::exception& e) {
    error = std::string("malformed: ") + e.what();
    return std::nullopt;
  }
}

bool same_machine(const TuningFile& f, const Fingerprint& here, std::string& why) {
  if (f.machine.hostname != here.hostname) {
    why = "made on host '" + f.machine.hostname + "', this is '" + here.hostname + "'";
    return false;
  }
  if (f.machine.cores != here.cores) {
    why = "made for " + std::to_string(f.machine.cores) + " cores, this machine has " +
          std::to_string(here.cores);
    return false;
  }
  why.clear();
  return true;
}

int merge_tuning(TuningFile& fresh, const TuningFile& old) {
  const int cores = fresh.machine.cores;
  const auto same_link = [cores](const LinkParams& a, const LinkParams& b) {
    return a.link_class == b.link_class &&
           layout_key(a.local_ranks, cores) == layout_key(b.local_ranks, cores) &&
           (a.mapping == b.mapping || b.mapping.empty());  // an old entry of unknown mapping
                                                           // gives way to a fresh one
  };
  int kept = 0;
  const std::size_t fresh_links = fresh.links.size();
  for (const LinkParams& l : old.links) {
    bool replaced = false;
    for (std::size_t i = 0; i < fresh_links; ++i)
      replaced = replaced || same_link(fresh.links[i], l);
    if (!replaced) {
      fresh.links.push_back(l);
      ++kept;
    }
  }
  const auto covered = [&](int p, const std::string& link, auto const& entries, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      if (entries[i].p == p && entries[i].link == link) return true;
    return false;
  };
  const std::size_t fresh_x = fresh.crossovers.size(), fresh_k = fresh.k_rules.size();
  for (const CrossoverEntry& c : old.crossovers)
    if (!covered(c.p, c.link, fresh.crossovers, fresh_x)) fresh.crossovers.push_back(c);
  for (const KRule& k : old.k_rules)
    if (!covered(k.p, k.link, fresh.k_rules, fresh_k)) fresh.k_rules.push_back(k);
  return kept;
}

bool save_tuning(const TuningFile& f, const std::string& path, std::string& error) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    error = "cannot write " + path;
    return false;
  }
  out << to_json_text(f);
  out.close();
  if (!out) {
    error = "write to " + path + " failed";
    return false;
  }
  return true;
}

std::string tuning_path() {
  if (const char* e = std::getenv("FABCOLL_TUNING"); e != nullptr && *e != '\0') return e;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x != nullptr && *x != '\0')
    return std::string(x) + "/fabcoll/tuning.json";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    return std::string(h) + "/.config/fabcoll/tuning.json";
  return {};
}

std::optional<TuningFile> load_tuning_from(const std::string& path, std::string& notice) {
  notice.clear();
  const auto reject = [&](const std::string& why) {
    notice = "fabcoll: ignoring tuning file " + path + ": " + why + "; using built-in defaults";
    return std::nullopt;
  };
  std::ifstream in(path);
  if (!in) return reject("cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string error;
  std::optional<TuningFile> f = parse_tuning(ss.str(), error);
  if (!f) return reject(error);
  if (!same_machine(*f, this_machine(), error)) return reject(error + " (rerun fabcoll-calibrate)");
  if (f->machine.fabcoll_version != fabcoll_version()) {
    notice = "fabcoll: tuning file " + path + " was made by fabcoll " + f->machine.fabcoll_version +
             ", this is " + fabcoll_version() + "; using it (rerun fabcoll-calibrate to refresh)";
  }
  return f;
}

std::optional<TuningFile> load_tuning(std::string& notice) {
  notice.clear();
  const std::string path = tuning_path();
  if (path.empty()) return std::nullopt;
  const char* env = std::getenv("FABCOLL_TUNING");
  const bool explicit_path = env != nullptr && *env != '\0';
  std::error_code ec;
  if (!explicit_path && !std::filesystem::exists(path, ec)) return std::nullopt;
  return load_tuning_from(path, notice);
}

std::optional<double> gamma_for(const TuningFile& f, std::string_view op,
                                std::string_view datatype) {
  for (const GammaEntry& g : f.gammas)
    if (g.op == op && g.datatype == datatype) return g.gamma;
  return std::nullopt;
}

double layout_copy(double copy, int local_ranks, int cores) {
  return local_ranks > 0 && cores > 0 && local_ranks > cores
             ? copy * static_cast<double>(local_ranks) / cores
             : copy;
}

int layout_key(int local_ranks, int cores) {
  return cores > 0 && local_ranks > cores ? local_ranks : 0;
}

std::string layout_name(int local_ranks, int cores, std::string_view mapping) {
  if (layout_key(local_ranks, cores) == 0) return "quiet";
  return std::to_string(local_ranks) + " ranks on " + std::to_string(cores) + " cores" +
         (mapping.empty() ? std::string() : ", " + std::string(mapping));
}

const LinkParams* link_for(const TuningFile& f, std::string_view link_class, int local_ranks,
                           std::string_view mapping) {
  // The class: an exact name match, else the first class of the same family (before '/').
  std::string_view cls;
  for (const LinkParams& l : f.links)
    if (l.link_class == link_class) cls = l.link_class;
  if (cls.empty()) {
    const std::string_view prefix = link_class.substr(0, link_class.find('/'));
    for (const LinkParams& l : f.links) {
      if (std::string_view(l.link_class).substr(0, l.link_class.find('/')) == prefix) {
        cls = l.link_class;
        break;
      }
    }
  }
  if (cls.empty()) return nullptr;
  // The layout within the class.
  const int want = layout_key(local_ranks, f.machine.cores);
  const LinkParams* exact = nullptr;
  const LinkParams* nearest_over = nullptr;
  const LinkParams* quiet = nullptr;
  const LinkParams* first = nullptr;
  for (const LinkParams& l : f.links) {
    if (l.link_class != cls) continue;
    if (first == nullptr) first = &l;
    const int key = layout_key(l.local_ranks, f.machine.cores);
    if (key == want && (exact == nullptr || (exact->mapping != mapping && l.mapping == mapping)))
      exact = &l;
    if (key == 0 && quiet == nullptr) quiet = &l;
    // The nearest oversubscribed layout; at equal distance, the one of this mapping.
    if (key > 0) {
      const int d = nearest_over != nullptr ? std::abs(nearest_over->local_ranks - want) : 0;
      if (nearest_over == nullptr || std::abs(key - want) < d ||
          (std::abs(key - want) == d && nearest_over->mapping != mapping && l.mapping == mapping))
        nearest_over = &l;
    }
  }
  if (exact != nullptr) return exact;
  if (want > 0 && nearest_over != nullptr) return nearest_over;
  return quiet != nullptr ? quiet : first;
}

CostModel model_for(const TuningFile& f, std::string_view link_class, double typical_bytes,
                    int local_ranks, std::string_view mapping) {
  const LinkParams* hit = link_for(f, link_class, local_ranks, mapping);
  if (hit == nullptr) return CostModel{};
  CostModel m = hit->model;
  if (hit->break_bytes > 0 && typical_bytes >= hit->break_bytes) {
    m.alpha = hit->alpha_above;
    m.beta = hit->beta_above;
    if (hit->exchange_alpha_above > 0) m.exchange_alpha = hit->exchange_alpha_above;
    m.call_wake = hit->call_wake_above;  // the upper segment's K (0: none)
    m.gap = -1;  // G was measured below the break; above it the sender moves every byte
  }
  if (const auto g = gamma_for(f, "sum", "float64")) m.gamma = *g;
  // δ: the measured local copy (files before it: the built-in value). Measured by one rank
  // alone; where the layout time-shares cores, every rank of an all-to-all copies at once.
  m.copy = layout_copy(gamma_for(f, "copy", "byte").value_or(kBuiltinCopy), hit->local_ranks,
                       f.machine.cores);
  return m;
}

std::optional<LinkModel> link_model_for(const TuningFile& f, std::string_view link_class,
                                        int local_ranks, std::string_view mapping) {
  const LinkParams* hit = link_for(f, link_class, local_ranks, mapping);
  if (hit == nullptr) return std::nullopt;
  const double brk = std::max(hit->break_bytes, 0.0);
  return LinkModel{model_for(f, link_class, 0, local_ranks, mapping),
                   model_for(f, link_class, brk, local_ranks, mapping), brk};
}

std::string format_link_model(const LinkModel& l) {
  const CostModel& m = l.below;
  char text[1024];
  std::snprintf(
      text, sizeof text,
      "%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g "
      "%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g "
      "%.17g %.17g %.17g",
      m.alpha, m.beta, m.gamma, m.overhead, m.pull_bytes, m.copy, m.written, m.written_from,
      m.exchange_alpha, m.exchange_beta, l.break_bytes, l.above.alpha, l.above.beta, m.gap,
      l.above.gap, m.wake, m.large_from, m.beta_large, m.streamed, m.small_below, m.alpha_small,
      l.above.exchange_alpha, m.call_wake, m.receive_overhead, m.ring_exchange_beta,
      l.above.call_wake, m.gamma_large_from, m.gamma_large, m.overhead_small, m.call_wake_small);
  return text;
}

std::size_t parse_link_model(const std::string& text, LinkModel& out) {
  LinkModel l;
  CostModel& m = l.below;
  int used = 0;
  if (std::sscanf(text.c_str(),
                  "%lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg "
                  "%lg %lg %lg %lg %lg %lg %lg %lg %lg %lg %lg%n",
                  &m.alpha, &m.beta, &m.gamma, &m.overhead, &m.pull_bytes, &m.copy, &m.written,
                  &m.written_from, &m.exchange_alpha, &m.exchange_beta, &l.break_bytes,
                  &l.above.alpha, &l.above.beta, &m.gap, &l.above.gap, &m.wake, &m.large_from,
                  &m.beta_large, &m.streamed, &m.small_below, &m.alpha_small,
                  &l.above.exchange_alpha, &m.call_wake, &m.receive_overhead, &m.ring_exchange_beta,
                  &l.above.call_wake, &m.gamma_large_from, &m.gamma_large, &m.overhead_small,
                  &m.call_wake_small, &used) != 30 ||
      used <= 0)
    return 0;
  // The numbers end at the end of the line or at a space: "… 1.1x" is garbled, not 1.1.
  auto end = static_cast<std::size_t>(used);
  if (end < text.size() && text[end] != ' ') return 0;
  while (end < text.size() && text[end] == ' ') ++end;
  const double above_alpha = l.above.alpha, above_beta = l.above.beta, above_gap = l.above.gap,
               above_exchange = l.above.exchange_alpha, above_call = l.above.call_wake;
  l.above = m;  // γ (and beyond the cache), o, o_r, δ, ω, χ, W, κ, β beyond the cache, α of
                // small messages, the pull
                // threshold: the link's
  l.above.alpha = above_alpha;
  l.above.beta = above_beta;
  l.above.gap = above_gap;
  l.above.exchange_alpha = above_exchange;
  l.above.call_wake = above_call;  // K above the break (0: none)
  out = l;
  return end;
}

}  // namespace fabcoll::tuning
