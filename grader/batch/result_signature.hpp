// Signed Slurm results. A task writes OUT/results/<id>.json on a shared file
// system that other jobs (and, were the seal broken, a submission) could write
// too; `grader collect` must take only what a task's grader wrote. So every
// result carries an HMAC-SHA-256 of its text under OUT/slurm/key: 32 random
// bytes made by `grader batch --slurm`, readable by its owner alone (0600).
// The sealed program never sees OUT (not on its allow-list; hidden in bwrap).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace grader {

// OUT/slurm/key, made when missing (0600, by this user); kept as it is when it
// exists, so a resubmitted array's earlier results stay valid. Throws
// EnvironmentError when the key is not a plain file of this user's that only
// its owner may read.
std::string make_result_key(const std::filesystem::path& out);

// The key a task or `collect` signs and checks with. Throws EnvironmentError
// when it is missing (the batch predates signing: run `grader batch --slurm`
// again) or others may read or write it.
std::string read_result_key(const std::filesystem::path& out);

// The document with "signature": the tag of its text without that member.
nlohmann::json signed_result(nlohmann::json doc, const std::string& key);

// True when doc carries the signature of its own text under key.
bool signature_holds(const nlohmann::json& doc, const std::string& key);

}  // namespace grader
