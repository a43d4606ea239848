// The tuning file: what fabcoll-calibrate measured on one machine, as versioned JSON, and the
// run-time side that loads it and hands the engine a CostModel per link class.
//
// Schema (schema_version 2; "fabcoll-tuning" in "format"; version 1 files, which have no
// "local_ranks", still load: their links describe the quiet layout):
//   { "format": "fabcoll-tuning", "schema_version": 1, "created": "<UTC ISO 8601>",
//     "machine": { "hostname", "cores", "provider", "fabcoll_version" },
//     "links": [ { "class": "shm" | "ofi/<provider>", "alpha", "beta", "gamma", "r2",
//                  "points", "break_bytes" (0: none), "alpha_above", "beta_above",
//                  "local_ranks" (0: at most one rank per core; L > cores: L ranks of one node
//                  time-sharing its cores), "layout" (text, informational),
//                  "mapping" (optional, with local_ranks > cores: which ranks shared a CPU
//                  when it was measured, "cyclic" | "block" | "other" | "unpinned", see
//                  cpu_mapping in bootstrap/node_map.hpp; absent: not known),
//                  "overhead" (optional: the sender's time per message, LogP's o, in [0, alpha];
//                  absent: not measured, o = alpha),
//                  "gap" (optional: the sender's time per byte of a message it writes, LogGP's
//                  G, in [0, beta], below the break only; absent: not measured, G = beta),
//                  "written" (optional: ω, the cost per byte of data its sender wrote within
//                  the collective as a multiple of beta, >= 1; absent: 1),
//                  "exchange_alpha", "exchange_beta" (optional: χα, χβ, what a message costs
//                  while its sender also receives, as multiples of alpha and beta, in
//                  [kExchangeMin, kExchangeMax]; absent: 1),
//                  "ring_exchange_beta" (optional: β_x, what an exchange's byte across CPUs
//                  through shm's rings costs where ranks share cores, s/B, >= 0; absent:
//                  -1, not fitted: exchange_beta × beta),
//                  "pull_fanout" (optional: φ, what each further receiver pulling the same
//                  sender's buffer at once adds, as a multiple of beta n, >= 0; absent: 0),
//                  "wake" (optional: W, what a one-way message of a fan-in collective
//                  adds to alpha while its receiver waits off its core, seconds, >= 0;
//                  absent: 0),
//                  "large_from", "beta_large" (optional, both or neither: β beyond the
//                  cache, what a whole message of at least large_from bytes costs per byte
//                  in place of beta, both > 0; absent: none),
//                  "gamma_large_from", "gamma_large" (optional, both or neither: γ beyond
//                  the cache, what a combine of a message of at least gamma_large_from
//                  bytes costs per byte in place of the (sum, float64) gamma, both > 0;
//                  absent: none),
//                  "streamed" (optional: κ, what a broadcast's pipelined packet streamed
//                  through rings costs as a multiple of alpha + beta m, > 0; absent: 1),
//                  "small_below", "alpha_small" (optional, both or neither: α of small
//                  messages, what a message of fewer than small_below bytes costs in place of
//                  alpha, both > 0, small_below below break_bytes; absent: none),
//                  "overhead_small" (optional, with small_below only: o of those messages,
//                  seconds; absent or negative: overhead),
//                  "call_wake_small" (optional, with small_below only: K for a call's share
//                  of rounds in those messages, seconds; absent or negative: call_wake),
//                  "exchange_alpha_above" (optional: χα above the break, in
//                  [kExchangeMin, kExchangeFileMax]; absent: exchange_alpha),
//                  "call_wake" (optional: K, what a call adds once for the share of its path
//                  not in exchanges, seconds, >= 0; absent: 0),
//                  "call_wake_above" (optional: K above the break, seconds, >= 0; absent:
//                  0; without a break, read and not used) } ],
//     "gamma": [ { "op": "sum", "datatype": "float64", "gamma" } ]  (and { "op": "copy",
//                "datatype": "byte", "gamma" }: δ, a local memcpy per byte),
//     "k_rules": [ { "collective", "algorithm", "p", "link", "sizes": [[n, k], …] } ],
//     "crossovers": [ { "collective", "p", "link",
//                       "segments": [ { "algorithm", "lo", "hi" } ] } ],
//     "validation": { … free-form summary written by fabcoll-calibrate … } }
// Times in seconds, β and γ per byte, sizes in bytes.
//
// Loading never throws and never aborts a job: a missing, unreadable, malformed or foreign file
// (other schema, other host, other core count) is rejected with a one-line notice and the
// built-in defaults stay in force.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuning/cost_model.hpp"

namespace fabcoll::tuning {

inline constexpr int kSchemaVersion = 2;
/// The range χα and χβ (CostModel::exchange_alpha, exchange_beta) may take: an exchange at
/// worst serialises both directions and a core's other work (4), at best overlaps them (1/4).
inline constexpr double kExchangeMin = 0.25;
inline constexpr double kExchangeMax = 4;
/// The largest χα a tuning file may hold: over the fabric with ranks sharing cores χα is fitted
/// apart from χβ, and an exchange round there (every rank of a core sending and receiving)
/// came out at 2.9–4.3 times a one-way round's α (p = 4 sockets on 2 cores, nine launches).
inline constexpr double kExchangeFileMax = 8;
/// The oldest schema this build still reads (older files are rejected with a notice).
inline constexpr int kOldestSchemaVersion = 1;
inline constexpr std::string_view kFormat = "fabcoll-tuning";

struct Fingerprint {
  std::string hostname;
  int cores = 0;
  std::string provider;  // libfabric provider used for the ofi class ("" if none)
  std::string fabcoll_version;
};

/// The fingerprint of the machine this process runs on (provider as given).
Fingerprint this_machine(std::string provider = {});
/// "major.minor.patch" of this build.
std::string fabcoll_version();

/// Fitted α, β (and γ) of one link class.
struct LinkParams {
  std::string link_class;  // "shm", "ofi/sockets", "ofi/tcp;ofi_rxm", "inproc", …
  CostModel model;  // below the break (or everywhere when break_bytes == 0); model.overhead is
                    // the measured o of this layout (JSON "overhead"), -1 when not measured
  double r2 = 0;
  int points = 0;
  double break_bytes = 0;  // protocol break: sizes >= break_bytes use alpha_above/beta_above
  double alpha_above = 0;
  double beta_above = 0;
  /// χα above the break (JSON "exchange_alpha_above"), where it was fitted apart from the one
  /// below (model.exchange_alpha); 0: the same.
  double exchange_alpha_above = 0;
  /// K above the break (JSON "call_wake_above"): what a call whose rounds lie above it adds
  /// once, for the share of its path not in exchanges (CostModel::call_wake of the upper
  /// segment); 0: none.
  double call_wake_above = 0;
  /// The layout the parameters were measured in: 0 when every rank had a core of its own (the
  /// quiet ping-pong), else the number of ranks on the node when it has fewer cores than that
  /// (all ranks ping-ponging at once, see fabcoll-calibrate). Same class, other layout: another
  /// entry.
  int local_ranks = 0;
  /// With local_ranks > cores: which ranks shared a CPU (cpu_mapping), "" when not known.
  /// Same class and layout, other mapping: another entry.
  std::string mapping;
};

/// The layout key for local_ranks ranks on a node of `cores` cores: 0 when each rank can have a
/// core (local_ranks <= cores, or cores unknown), else local_ranks.
int layout_key(int local_ranks, int cores);
/// δ (the local copy, measured by one rank alone) as a layout charges it: where local_ranks
/// ranks time-share `cores` cores every rank copies at once, local_ranks/cores times as long.
double layout_copy(double copy, int local_ranks, int cores);
/// "quiet" or "4 ranks on 2 cores", with ", <mapping>" when oversubscribed and mapping is set.
std::string layout_name(int local_ranks, int cores, std::string_view mapping = {});

struct GammaEntry {
  std::string op;        // "sum", "max", …
  std::string datatype;  // "float64", "int32", …
  double gamma = 0;      // s/B
};

/// Packet counts of one pipelined algorithm: sizes[i] = {n bytes, k}.
struct KRule {
  std::string collective;
  std::string algorithm;
  int p = 0;
  std::string link;
  std::vector<std::pair<double, double>> sizes;
};

struct CrossoverEntry {
  std::string collective;
  int p = 0;
  std::string link;
  struct Segment {
    std::string algorithm;
    double lo = 0;
    double hi = 0;
  };
  std::vector<Segment> segments;
};

struct TuningFile {
  int schema_version = kSchemaVersion;
  std::string created;
  Fingerprint machine;
  std::vector<LinkParams> links;
  std::vector<GammaEntry> gammas;
  std::vector<KRule> k_rules;
  std::vector<CrossoverEntry> crossovers;
  std::string validation_json = "{}";  // kept verbatim (a JSON object)
};

/// JSON text of f (pretty-printed).
std::string to_json_text(const TuningFile& f);

/// Parses text. On failure returns nullopt and sets error to one line saying why (bad JSON,
/// wrong format, schema_version outside [kOldestSchemaVersion, kSchemaVersion], missing
/// fields). A version 1 file is read as version 2 with every link in the quiet layout.
std::optional<TuningFile> parse_tuning(std::string_view text, std::string& error);

/// Whether f was made on `here`: same hostname and core count. Version or provider
/// differences are accepted (the notice mentions a version difference).
bool same_machine(const TuningFile& f, const Fingerprint& here, std::string& why);

/// Adds to `fresh` what `old` (an earlier file of the same machine) holds that `fresh` does not
/// replace: links of another (class, layout), crossovers and k rules of another (p, link).
/// γ, fingerprint and validation stay fresh's. So that one file describes every layout
/// calibrated (p = 2 and p = 4 runs, say). Returns the number of links kept from old.
int merge_tuning(TuningFile& fresh, const TuningFile& old);

/// Writes f to path (creating parent directories). False and error set on failure.
bool save_tuning(const TuningFile& f, const std::string& path, std::string& error);

/// The path load_tuning reads: $FABCOLL_TUNING if set and non-empty, else
/// $XDG_CONFIG_HOME/fabcoll/tuning.json, else $HOME/.config/fabcoll/tuning.json ("" if none).
std::string tuning_path();

/// Reads and checks the file at path against this machine. notice: one line for the user
/// when the file is rejected ("fabcoll: ignoring tuning file …; using built-in defaults") or
/// accepted with a remark; empty otherwise.
std::optional<TuningFile> load_tuning_from(const std::string& path, std::string& notice);

/// load_tuning_from(tuning_path()). A default path that does not exist is silent (empty
/// notice); a FABCOLL_TUNING that names a missing file is a notice.
std::optional<TuningFile> load_tuning(std::string& notice);

/// The cost model for a link class: an exact class match, else the first class with the same
/// prefix before '/' ("ofi" matches "ofi/sockets"), else CostModel{} (built-in defaults).
/// gamma is the file's measured γ for (sum, float64) when present, else the link's own γ; copy
/// (δ) the file's (copy, byte) entry, else kBuiltinCopy, times the ranks per core of an
/// oversubscribed layout.
/// A protocol break is not representable in one CostModel: α and β come from the segment
/// that holds `typical_bytes` (default: below the break). The sender's overhead o is the link's
/// (one value for both segments; -1, o = α, when the file does not have it); its time per
/// byte G only below the break (-1, G = β, above it or when the file does not have it).
/// Layout: local_ranks is the number of ranks on this node (0: not known, taken as quiet).
/// Within the class, the entry whose layout_key equals layout_key(local_ranks, f's cores) wins;
/// when the node is oversubscribed and there is no such entry, the oversubscribed entry with
/// the nearest local_ranks; else the quiet entry; else the class's first entry. Among entries
/// of the same layout (or, for the nearest, the same distance), the one measured under
/// `mapping` (which ranks share a CPU now, "" when not known) wins, else the first.
CostModel model_for(const TuningFile& f, std::string_view link_class, double typical_bytes = 0,
                    int local_ranks = 0, std::string_view mapping = {});
/// Both segments of the link model_for describes and its break (one segment when the entry has
/// none): what the engine selects with. std::nullopt when f has no entry for the class.
std::optional<LinkModel> link_model_for(const TuningFile& f, std::string_view link_class,
                                        int local_ranks = 0, std::string_view mapping = {});
/// A link model as one line of text (every field that selection reads, both segments), and back:
/// how rank 0's model reaches every rank at start-up, so that all select alike. The upper
/// segment shares the lower one's fields apart from α, β, G and χα. parse_link_model returns where
/// the text after the numbers starts (past the spaces that must follow them), or 0 when the
/// line is garbled.
std::string format_link_model(const LinkModel& l);
std::size_t parse_link_model(const std::string& text, LinkModel& l);
/// The entry model_for uses (nullptr: none, built-in defaults).
const LinkParams* link_for(const TuningFile& f, std::string_view link_class, int local_ranks = 0,
                           std::string_view mapping = {});

/// The γ measured for (op, datatype), if any.
std::optional<double> gamma_for(const TuningFile& f, std::string_view op,
                                std::string_view datatype);

}  // namespace fabcoll::tuning
