// config.toml (src/base/config.cc, LoadConfig): a file people edit by hand. The input is the file
// at <home>/config.toml in a MemoryFileSystem. Invariants: errors are kInvalidArgument, never an
// exception; a loaded config has exactly one value per schema key, in schema order, and every
// value can be read back with its type's getter.
#include <string>
#include <variant>

#include "fuzz/fuzz_util.h"
#include "mend/base/config.h"
#include "mend/base/file_system.h"
#include "mend/base/memory_file_system.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend;
  MemoryFileSystem fs;
  FUZZ_CHECK(fs.CreateDirs("/home/u/.mend").ok(), "home");
  FUZZ_CHECK(WriteFileAtomically(fs, "/home/u/.mend/config.toml", fuzz::AsText(data, size)).ok(),
             "config.toml");
  ConfigSources sources;
  sources.user_home = "/home/u";
  Result<Config> config = LoadConfig(sources, fs);
  if (!config.ok()) {
    FUZZ_CHECK(config.status().code() == StatusCode::kInvalidArgument, config.status().ToString());
    return 0;
  }
  const std::vector<ConfigKeySpec>& schema = DefaultConfigSchema();
  FUZZ_CHECK(config->values().size() == schema.size(), "one value per key");
  for (size_t i = 0; i < schema.size(); ++i) {
    const ConfigValue& v = config->values()[i];
    FUZZ_CHECK(v.key == schema[i].name, "values out of schema order");
    FUZZ_CHECK(config->Find(v.key) == &v, "Find does not find " + v.key);
    // Each getter asserts the type; reading every value proves the types agree.
    std::visit(
        [&](const auto& typed) {
          using T = std::decay_t<decltype(typed)>;
          if constexpr (std::is_same_v<T, std::string>) (void)config->GetString(v.key);
          if constexpr (std::is_same_v<T, bool>) (void)config->GetBool(v.key);
          if constexpr (std::is_same_v<T, std::int64_t>) (void)config->GetInt(v.key);
          if constexpr (std::is_same_v<T, double>) (void)config->GetDouble(v.key);
          if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
            (void)config->GetDuration(v.key);
          }
        },
        v.value);
  }
  return 0;
}
