#include "results/table.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "results/file_bounds.hpp"
#include "sim/errors.hpp"

namespace headroom::results {

namespace {

void check_columns(const Table& t) {
  for (const auto& c : t.columns)
    if (c.size() != t.rows()) throw sim::InternalError("table column " + c.name + " has a different length");
}

struct H5File {
  hid_t id = -1;
  ~H5File() {
    if (id >= 0) H5Fclose(id);
  }
};

void fail(const std::string& path, const std::string& tmp, const std::string& what) {
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  throw sim::InputError(path, 0, 0, "", "cannot write results: " + what);
}

void write_string_attr(hid_t obj, const char* name, const std::string& value) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  const char* p = value.c_str();
  H5Awrite(attr, type, &p);
  H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
}

}  // namespace

void write_table_hdf5(const Table& table, const std::string& path, const std::string& group) {
  check_columns(table);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  {
    H5File f;
    f.id = H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f.id < 0) fail(path, tmp, "cannot create " + tmp);
    hid_t g = H5Gcreate2(f.id, ("/" + group).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) fail(path, tmp, "cannot create group " + group);
    const hsize_t n = table.rows();
    for (const auto& c : table.columns) {
      hid_t space = H5Screate_simple(1, &n, nullptr);
      herr_t rc;
      if (c.text) {
        hid_t type = H5Tcopy(H5T_C_S1);
        H5Tset_size(type, H5T_VARIABLE);
        H5Tset_cset(type, H5T_CSET_UTF8);
        hid_t ds = H5Dcreate2(g, c.name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        std::vector<const char*> ptrs;
        for (const auto& s : c.strings) ptrs.push_back(s.c_str());
        rc = ds < 0 ? -1 : (n == 0 ? 0 : H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()));
        if (ds >= 0) H5Dclose(ds);
        H5Tclose(type);
      } else {
        hid_t ds = H5Dcreate2(g, c.name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        rc = ds < 0 ? -1
                    : (n == 0 ? 0 : H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.numbers.data()));
        if (ds >= 0) H5Dclose(ds);
      }
      H5Sclose(space);
      if (rc < 0) {
        H5Gclose(g);
        fail(path, tmp, "cannot write column " + c.name);
      }
    }
    H5Gclose(g);
    for (const auto& [k, v] : table.attributes) write_string_attr(f.id, k.c_str(), v);
    if (H5Fclose(f.id) < 0) {
      f.id = -1;
      fail(path, tmp, "cannot close " + tmp);
    }
    f.id = -1;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail(path, tmp, ec.message());
}

void write_table_csv(const Table& table, std::ostream& out) {
  check_columns(table);
  auto quoted = [&](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) {
      if (ch == '"') q += '"';
      q += ch;
    }
    return q + '"';
  };
  for (std::size_t i = 0; i < table.columns.size(); ++i) out << (i ? "," : "") << quoted(table.columns[i].name);
  out << '\n';
  char buf[64];
  for (std::size_t r = 0; r < table.rows(); ++r) {
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      const auto& c = table.columns[i];
      if (i) out << ',';
      if (c.text) {
        out << quoted(c.strings[r]);
      } else {
        auto res = std::to_chars(buf, buf + sizeof buf, c.numbers[r]);
        out.write(buf, res.ptr - buf);
      }
    }
    out << '\n';
  }
}

namespace {

void reclaim_strings(hid_t mem, hid_t space, void* buf) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(mem, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(mem, space, H5P_DEFAULT, buf);
#endif
}

std::string read_string_attr(hid_t attr) {
  std::string out;
  hid_t type = H5Aget_type(attr);
  if (type < 0) return out;
  if (H5Tget_class(type) == H5T_STRING) {
    hid_t space = H5Aget_space(attr);
    hid_t mem = H5Tcopy(H5T_C_S1);
    if (H5Tis_variable_str(type) > 0) {
      H5Tset_size(mem, H5T_VARIABLE);
      H5Tset_cset(mem, H5Tget_cset(type));
      char* p = nullptr;
      if (H5Aread(attr, mem, &p) >= 0 && p != nullptr) {
        out = p;
        reclaim_strings(mem, space, &p);
      }
    } else {
      const std::size_t size = H5Tget_size(type);
      H5Tset_size(mem, size);
      std::vector<char> buf(size + 1, '\0');
      if (H5Aread(attr, mem, buf.data()) >= 0) out = std::string(buf.data());
    }
    H5Tclose(mem);
    H5Sclose(space);
  }
  H5Tclose(type);
  return out;
}

herr_t collect_attr(hid_t obj, const char* name, const H5A_info_t*, void* data) {
  auto* attrs = static_cast<std::map<std::string, std::string>*>(data);
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a >= 0) {
    (*attrs)[name] = read_string_attr(a);
    H5Aclose(a);
  }
  return 0;
}

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

}  // namespace

std::optional<std::pair<std::size_t, std::size_t>> parse_shard_text(std::string_view text) {
  auto whole = [](std::string_view digits, std::size_t& v) {
    const auto res = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    return !digits.empty() && res.ec == std::errc() && res.ptr == digits.data() + digits.size();
  };
  const std::size_t slash = text.find('/');
  std::size_t i = 0, n = 0;
  if (slash == std::string_view::npos || !whole(text.substr(0, slash), i) || !whole(text.substr(slash + 1), n) ||
      i >= n || n > static_cast<std::size_t>(kMaxSweepRuns))
    return std::nullopt;
  return std::pair{i, n};
}

bool has_hdf5_group(const std::string& path, const std::string& group) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (H5Fis_hdf5(path.c_str()) <= 0) return false;
  H5File f;
  f.id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  return f.id >= 0 && H5Lexists(f.id, group.c_str(), H5P_DEFAULT) > 0;
}

Table read_table_hdf5(const std::string& path, const std::string& group) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  auto bad = [&](const std::string& why) { throw sim::InputError(path, 0, 0, "/" + group, why); };
  if (!std::filesystem::exists(path)) throw sim::InputError(path, 0, 0, "", "no such file");
  if (std::filesystem::is_directory(path)) throw sim::InputError(path, 0, 0, "", "is a directory");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw sim::InputError(path, 0, 0, "", "not an HDF5 file");
  H5File f;
  f.id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f.id < 0) throw sim::InputError(path, 0, 0, "", "cannot open the file");
  if (H5Lexists(f.id, group.c_str(), H5P_DEFAULT) <= 0) bad("missing group (not a table of this kind)");
  hsize_t file_bytes = 0;
  if (H5Fget_filesize(f.id, &file_bytes) < 0) file_bytes = 0;
  Table t;
  H5Aiterate2(f.id, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attr, &t.attributes);
  hid_t g = H5Gopen2(f.id, group.c_str(), H5P_DEFAULT);
  if (g < 0) bad("cannot open the group");
  std::vector<std::string> names;
  H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names);
  if (auto it = t.attributes.find("columns"); it != t.attributes.end()) {
    std::vector<std::string> ordered;
    std::string cur;
    for (char c : it->second + "\n") {
      if (c == '\n') {
        if (!cur.empty() && std::find(names.begin(), names.end(), cur) != names.end()) ordered.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    for (const auto& n : names)
      if (std::find(ordered.begin(), ordered.end(), n) == ordered.end()) ordered.push_back(n);
    names = ordered;
  }
  std::string error;
  for (const auto& name : names) {
    hid_t ds = H5Dopen2(g, name.c_str(), H5P_DEFAULT);
    if (ds < 0) {
      error = "cannot open column " + name;
      break;
    }
    hid_t type = H5Dget_type(ds);
    hid_t space = H5Dget_space(ds);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    if (n > 0) {
      try {  // a variable-length string is a 16-byte reference at least; a number 1 byte at least
        const bool vlen = H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0;
        detail::check_declared_size(path, "/" + group + "/" + name, static_cast<std::uint64_t>(n), vlen ? 16 : 1,
                                    file_bytes);
      } catch (...) {
        H5Sclose(space);
        H5Tclose(type);
        H5Dclose(ds);
        H5Gclose(g);
        throw;
      }
    }
    Column c;
    c.name = name;
    herr_t rc = 0;
    if (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0) {
      c.text = true;
      hid_t mem = H5Tcopy(H5T_C_S1);
      H5Tset_size(mem, H5T_VARIABLE);
      H5Tset_cset(mem, H5Tget_cset(type));
      std::vector<char*> ptrs(static_cast<std::size_t>(std::max<hssize_t>(n, 0)), nullptr);
      if (n > 0) rc = H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data());
      if (rc >= 0) {
        for (char* p : ptrs) c.strings.emplace_back(p != nullptr ? p : "");
        if (n > 0) reclaim_strings(mem, space, ptrs.data());
      }
      H5Tclose(mem);
    } else if (H5Tget_class(type) == H5T_FLOAT || H5Tget_class(type) == H5T_INTEGER) {
      c.numbers.resize(static_cast<std::size_t>(std::max<hssize_t>(n, 0)));
      if (n > 0) rc = H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.numbers.data());
    } else {
      rc = -1;
    }
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(ds);
    if (rc < 0) {
      error = "cannot read column " + name;
      break;
    }
    t.columns.push_back(std::move(c));
  }
  H5Gclose(g);
  if (!error.empty()) bad(error);
  for (const auto& c : t.columns)
    if (c.size() != t.rows()) bad("column " + c.name + " has a different length");
  return t;
}

}  // namespace headroom::results
