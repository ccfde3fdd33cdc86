#include "results/table.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <filesystem>

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

}  // namespace headroom::results
