#include "timing_chart.hpp"

namespace grader {

std::optional<double> TimingScale::rate(const nlohmann::json& session, const std::string& who) const {
  const auto it = session.find(who + (flops ? "_gflops" : "_gbps"));
  if (it == session.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

TimingScale timing_scale(const nlohmann::json& session) {
  TimingScale s;
  if (!session.is_object()) return s;
  const auto library = session.find("library_gflops");
  s.flops = library != session.end() && library->is_number();
  s.unit = s.flops ? "GFLOP/s" : "GB/s";
  if (s.flops) {
    s.roofline = Roofline{session.value("library", std::string("library")), library->get<double>()};
  } else if (const auto memcpy = session.find("memcpy_gbps"); memcpy != session.end() && memcpy->is_number()) {
    // A lab whose data crosses the host's link is compared with the link itself.
    s.roofline = Roofline{session.value("memcpy_over_host_link", false) ? "link" : "memcpy", memcpy->get<double>()};
  }
  return s;
}

bool holds_timing(const nlohmann::json& data) {
  const TimingScale s = timing_scale(data);
  return data.is_object() && s.rate(data, "baseline") && s.rate(data, "candidate");
}

std::string session_chart(const nlohmann::json& session, const BarChartOptions& options) {
  if (!holds_timing(session)) return "";
  const TimingScale s = timing_scale(session);
  std::vector<BarRow> rows = {{"baseline", *s.rate(session, "baseline"), s.unit},
                              {"yours", *s.rate(session, "candidate"), s.unit}};
  if (const auto reference = s.rate(session, "reference")) rows.push_back({"reference", *reference, s.unit});
  return render_bar_chart(rows, s.roofline, options);
}

}  // namespace grader
