// neuronsim.isa, encode, validate and the dtype helpers.
#include <filesystem>
#include <fstream>
#include <random>

#include "api.hpp"
#include "convert.hpp"
#include "errors.hpp"

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/engines/dtype.hpp"
#include "neuronsim/engines/ops.hpp"
#include "neuronsim/isa/dump.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/io.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace neuronsim::python {

namespace {

// A fresh folder under the system's temporary directory, removed with everything in it when it goes out of
// scope.
class TempDir {
public:
  TempDir() {
    std::random_device rd;
    for (int attempt = 0; attempt < 100; ++attempt) {
      const fs::path p = fs::temp_directory_path() / ("neuronsim-" + std::to_string(rd()));
      if (fs::create_directory(p)) {
        path_ = p;
        return;
      }
    }
    throw SimulationError(ErrorContext{}, "internal error: cannot create a temporary directory");
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  std::string str() const { return path_.string(); }

private:
  fs::path path_;
};

py::dict files_dict(const std::map<std::string, std::vector<uint8_t>> &files) {
  py::dict d;
  for (const auto &[name, bytes] : files)
    d[py::str(name)] = py::bytes(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  return d;
}

isa::Dtype dtype_arg(py::handle v) {
  const std::string name = str_arg(v, "dtype");
  const isa::Dtype d = guarded([&] { return isa::parse_dtype(name); });
  if (!engines::dtype_supported(d))
    throw InputError({}, std::string("dtype ") + isa::enum_name(d) +
                             " is a packed container; its elements have no "
                             "single fp32 value");
  return d;
}

} // namespace

py::object isa() {
  return to_python(isa::isa_tables_json([](isa::InstructionType t) { return engines::executes(t); }));
}

namespace {
nlohmann::json arch_value(isa::CoreGen g) { return static_cast<int>(g); }
template <typename T> nlohmann::json arch_value(const T &v) { return v; }
} // namespace

py::object arch_params(py::handle arch) {
  const std::string a = guarded([&] { return sim::parse_arch(arch_arg(arch), "arch"); });
  const engines::ArchParams p = guarded([&] { return engines::load_arch(a); });
  nlohmann::json j = {{"name", p.name}};
#define NS_ARCH(ctype, member, key, range, doc) j[key] = arch_value(p.member);
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
  return to_python(j);
}

namespace {

// The files of a multi-core bundle folder (encode --cores) by their path in it: "cores.json" and
// "core<i>/<file>" for every core cores.json lists.
std::map<std::string, std::vector<uint8_t>> core_bundle_files(const std::string &dir) {
  const fs::path index = fs::path(dir) / sim::kCoresManifest;
  std::map<std::string, std::vector<uint8_t>> files;
  files.emplace(sim::kCoresManifest,
                isa::read_regular_file_bytes(index.string(), isa::kMaxInputFileBytes, "bundle index"));
  const nlohmann::json j = nlohmann::json::parse(files.at(sim::kCoresManifest));
  for (const auto &d : j.at("dirs"))
    for (const auto &[name, bytes] : sim::read_bundle_files((fs::path(dir) / d.get<std::string>()).string()))
      files.emplace(d.get<std::string>() + "/" + name, bytes);
  return files;
}

} // namespace

int count_arg(py::handle v, const char *name) {
  if (v.is_none()) return 0;
  if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v))
    throw py::type_error(std::string(name) + " must be an int or None, got " + type_name(v) + " " +
                         text_of(py::repr(v)));
  const py::int_ n = py::reinterpret_borrow<py::int_>(v);
  if (n < py::int_(1) || n > py::int_(sim::kMaxCores))
    throw UsageError(std::string(name) + " takes 1 to " + std::to_string(sim::kMaxCores) + ", got " +
                     text_of(n));
  return n.cast<int>();
}

py::dict run_config(py::handle kernel) {
  const std::string path = path_arg(kernel, "kernel");
  const sim::RunConfig c = guarded([&] {
    const fs::path f = fs::path(path) / sim::kRunConfigFile;
    std::error_code ec;
    return fs::is_directory(path, ec) && fs::exists(f, ec) ? sim::read_run_config(f.string())
                                                           : sim::RunConfig{};
  });
  py::dict d;
  if (c.cores)
    d["cores"] = *c.cores;
  if (c.lnc)
    d["lnc"] = *c.lnc;
  if (c.arch)
    d["arch"] = *c.arch;
  if (c.rtol)
    d["rtol"] = *c.rtol;
  if (c.atol)
    d["atol"] = *c.atol;
  return d;
}

std::string output_kind(py::handle path) {
  const std::string p = path_arg(path, "path");
  const isa::OutputTarget t = guarded([&] { return isa::output_target(p); });
  switch (t.kind) {
  case isa::OutputTarget::Kind::Absent:
    return "absent";
  case isa::OutputTarget::Kind::Regular:
    return "regular";
  case isa::OutputTarget::Kind::CharDevice:
    return "device";
  }
  return "absent";
}

namespace {
// A list of paths (str or os.PathLike each), TypeError naming `what` otherwise.
std::vector<std::string> path_list(py::handle paths, const char *what) {
  std::vector<std::string> out;
  if (paths.is_none())
    return out;
  if (py::isinstance<py::str>(paths) || !py::isinstance<py::iterable>(paths))
    throw py::type_error(std::string(what) + " must be a list of paths, got " +
                         std::string(py::str(paths.get_type().attr("__name__"))));
  for (py::handle p : paths)
    out.push_back(path_arg(p, what));
  return out;
}
} // namespace

void check_output_paths(py::handle outputs, py::handle inputs) {
  const auto outs = path_list(outputs, "outputs"), ins = path_list(inputs, "inputs");
  guarded([&] { sim::prepare_output_paths({}, outs, ins); });
}

void write_output(py::handle path, py::handle text, py::handle inputs) {
  const std::string p = path_arg(path, "path");
  if (!py::isinstance<py::str>(text))
    throw py::type_error("text must be a str, got " + std::string(py::str(text.get_type().attr("__name__"))));
  const std::string content = text.cast<std::string>();
  const auto ins = path_list(inputs, "inputs");
  guarded([&] {
    sim::prepare_output_paths({}, {p}, ins);
    isa::write_file_atomic(p, content);
  });
}

py::dict encode(py::handle kernel, py::handle gen, py::handle arch, py::handle outdir, py::handle cores,
                py::handle lnc) {
  const std::string gen_name = str_arg(gen, "gen");
  const isa::CoreGen g = guarded([&] { return sim::parse_gen(gen_name, "gen"); });
  const std::string a =
      !arch.is_none() ? guarded([&] { return sim::parse_arch(arch_arg(arch), "arch"); }) : sim::arch_for_gen(g);
  const int nc = count_arg(cores, "cores"), nl = count_arg(lnc, "lnc");
  const auto k = kernel_arg(kernel, sim::KernelForms::BirOnly);
  const std::string dir = outdir.is_none() ? "" : path_arg(outdir, "outdir");
  // cores= or lnc= given: one bundle set per core as `encode --cores N --lnc L` (the same counting: lnc alone
  // means that many cores).
  const bool per_core = nc > 0 || nl > 0;
  const int l = std::max(nl, 1), n = std::max(nc, l);
  const auto files = guarded([&] {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(core_mutex());
    auto write = [&](const std::string &d) {
      const sim::CoreSettingNames names{"cores", "lnc"};
      if (!per_core) {
        sim::encode_kernel(*k, g, a, d, names);
        return sim::read_bundle_files(d);
      }
      sim::encode_kernel_cores(*k, g, a, d, n, l, names);
      return core_bundle_files(d);
    };
    if (!dir.empty())
      return write(dir);
    TempDir tmp;
    return write(tmp.str());
  });
  return files_dict(files);
}

Report validate(py::handle kernel, py::handle bundles, py::handle inputs, py::handle arch,
                py::handle rtol_arg, py::handle atol_arg, py::handle cores, py::handle lnc) {
  const double rtol = *number_arg(rtol_arg, "rtol", false), atol = *number_arg(atol_arg, "atol", false);
  const auto k = kernel_arg(kernel, sim::KernelForms::BirOnly);
  sim::ValidateOptions vo;
  vo.names = {"cores", "lnc"};
  if (!arch.is_none())
    vo.arch = guarded([&] { return sim::parse_arch(arch_arg(arch), "arch"); });
  vo.inputs = inputs_arg(inputs, &k->program);
  guarded([&] {
    if (!vo.inputs.dir.empty())
      sim::check_dir_setting(vo.inputs.dir, "inputs");
    sim::check_tolerance_setting(rtol, "rtol");
    sim::check_tolerance_setting(atol, "atol");
  });
  vo.rtol = rtol, vo.atol = atol;
  vo.cores = count_arg(cores, "cores");
  vo.lnc = count_arg(lnc, "lnc");
  // The streams: a folder, or the files encode() returned (written to a temporary folder for the run).
  std::string dir;
  std::map<std::string, std::string> files;
  if (is_path(bundles)) {
    dir = path_arg(bundles, "bundles");
  } else if (py::isinstance<py::dict>(bundles)) {
    for (const auto &[name, data] : py::reinterpret_borrow<py::dict>(bundles)) {
      if (!py::isinstance<py::str>(name))
        throw py::type_error("bundles keys must be file names (str), got " + type_name(name) + " " +
                             text_of(py::repr(name)));
      const std::string n = text_of(name);
      if (!py::isinstance<py::bytes>(data))
        throw py::type_error(sim::array_source("bundles", n) +
                             " must be bytes (a file's content, as encode() "
                             "returns it), got " +
                             type_name(data));
      // A plain file name, or "core<i>/<file name>" of a multi-core encode (cores=).
      const size_t slash = n.find('/');
      const std::string file = slash == std::string::npos ? n : n.substr(slash + 1);
      const std::string folder = slash == std::string::npos ? "" : n.substr(0, slash);
      const bool core_folder = folder.size() > 4 && folder.compare(0, 4, "core") == 0 &&
                               folder.find_first_not_of("0123456789", 4) == std::string::npos;
      if (file.empty() || file.find('/') != std::string::npos || file == "." || file == ".." ||
          (slash != std::string::npos && !core_folder))
        throw InputError({sim::array_source("bundles", n), -1, "", ""},
                         "a bundle file name must be a plain file name, or core<i>/<file name> (encode(cores=))");
      files[n] = py::bytes(data.cast<py::bytes>()).cast<std::string>();
    }
  } else {
    throw py::type_error("bundles must be a folder (str or os.PathLike) or the dict encode() returns, got " +
                         type_name(bundles));
  }
  sim::ValidateReport r = guarded([&] {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(core_mutex());
    if (!dir.empty())
      return sim::validate_kernel(*k, dir, vo);
    TempDir tmp;
    for (const auto &[name, bytes] : files) {
      if (name.find('/') != std::string::npos)
        fs::create_directories((fs::path(tmp.str()) / name).parent_path());
      std::ofstream os(fs::path(tmp.str()) / name, std::ios::binary);
      os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!os)
        throw InputError({(fs::path(tmp.str()) / name).string(), -1, "", ""}, "cannot write");
    }
    return sim::validate_kernel(*k, tmp.str(), vo);
  });
  return Report{std::move(r)};
}

py::array to_float32(py::handle array, py::handle dtype) {
  const isa::Dtype d = dtype_arg(dtype);
  py::module_ np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(array, py::arg("order") = "C");
  const py::dtype container = numpy_dtype(d);
  if (!a.dtype().equal(container))
    throw InputError({}, std::string("to_float32: ") + isa::enum_name(d) + " values are held as " +
                             text_of(container) + ", got an array of " + text_of(a.dtype()));
  py::array_t<float> out(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  guarded(
      [&] { engines::load_f32(d, static_cast<const uint8_t *>(a.data()), out.mutable_data(), a.size()); });
  return std::move(out);
}

py::array from_float32(py::handle array, py::handle dtype) {
  const isa::Dtype d = dtype_arg(dtype);
  py::module_ np = py::module_::import("numpy");
  py::array_t<float> a = np.attr("asarray")(array, py::arg("dtype") = "float32", py::arg("order") = "C");
  py::array out(numpy_dtype(d), std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  guarded([&] { engines::store_f32(d, a.data(), static_cast<uint8_t *>(out.mutable_data()), a.size()); });
  return out;
}

} // namespace neuronsim::python
