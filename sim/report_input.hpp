// What a report page reads from a --stats document and from a --trace document (sim/report.cpp), checked
// before the page is built: a key the page needs that is missing, or a key of another JSON type than the page
// reads, is an InputError naming the file and the key ("profile.critical_path", "traceEvents[3].args"). The
// page is then built from documents whose every key it reads is known to be there with its type, so nothing
// reads past a document (nlohmann's operator[] on a const object takes a missing key as a programming error).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace neuronsim::sim {

// `file` names the document in the messages (a path, or "the stats document" when it was never a file).
void check_report_stats(const nlohmann::json &stats, const std::string &file);
void check_report_trace(const nlohmann::json &trace, const std::string &file);

} // namespace neuronsim::sim
