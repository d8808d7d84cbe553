// A program's ELF file: the libraries it needs and the symbols it imports, read without loading
// it (platform.hpp).
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "platform/platform.hpp"

namespace tasklens::platform {
namespace {

// A read-only view of a whole file, bounds-checked: every offset the ELF file gives is checked
// before it is followed, so a damaged file reads as "not ELF", never as a crash.
class FileView {
 public:
  explicit FileView(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const uint8_t*>(p);
        size_ = size_t(st.st_size);
      }
    }
    ::close(fd);
  }
  ~FileView() {
    if (data_) munmap(const_cast<uint8_t*>(data_), size_);
  }
  FileView(const FileView&) = delete;
  FileView& operator=(const FileView&) = delete;

  bool holds(uint64_t offset, uint64_t bytes) const {
    return offset <= size_ && bytes <= size_ - offset;
  }
  // A copy of the T at `offset` (the file's alignment is not trusted), if it is in the file.
  template <class T>
  bool read(uint64_t offset, T& out) const {
    if (!holds(offset, sizeof(T))) return false;
    std::memcpy(&out, data_ + offset, sizeof(T));
    return true;
  }
  // The NUL-terminated string at `offset` of the string table [table, table + bytes).
  std::string string_at(uint64_t table, uint64_t bytes, uint64_t offset) const {
    if (!holds(table, bytes) || offset >= bytes) return {};
    const char* s = reinterpret_cast<const char*>(data_ + table + offset);
    return std::string(s, strnlen(s, size_t(bytes - offset)));
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

ElfDynamic read_elf_dynamic(const std::string& path) {
  ElfDynamic info;
  FileView file(path);
  Elf64_Ehdr eh;
  if (!file.read(0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_shentsize != sizeof(Elf64_Shdr))
    return info;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i)
    if (!file.read(eh.e_shoff + i * sizeof(Elf64_Shdr), sections[i])) return info;
  info.elf = true;
  // A section's linked string table, as [offset, size) in the file.
  auto strings_of = [&](const Elf64_Shdr& s, uint64_t& at, uint64_t& bytes) {
    if (s.sh_link >= sections.size() || sections[s.sh_link].sh_type != SHT_STRTAB) return false;
    at = sections[s.sh_link].sh_offset;
    bytes = sections[s.sh_link].sh_size;
    return file.holds(at, bytes);
  };
  for (const Elf64_Shdr& s : sections) {
    uint64_t str = 0, str_bytes = 0;
    if ((s.sh_type != SHT_DYNAMIC && s.sh_type != SHT_DYNSYM) || !strings_of(s, str, str_bytes) ||
        !file.holds(s.sh_offset, s.sh_size))
      continue;
    if (s.sh_type == SHT_DYNAMIC) {
      for (uint64_t at = s.sh_offset; at + sizeof(Elf64_Dyn) <= s.sh_offset + s.sh_size;
           at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        if (!file.read(at, d) || d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_NEEDED)
          info.needed.push_back(file.string_at(str, str_bytes, d.d_un.d_val));
      }
    } else {
      for (uint64_t at = s.sh_offset + sizeof(Elf64_Sym);  // entry 0 is the null symbol
           at + sizeof(Elf64_Sym) <= s.sh_offset + s.sh_size; at += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        if (!file.read(at, sym)) break;
        if (sym.st_shndx == SHN_UNDEF && sym.st_name != 0)
          info.undefined.push_back(file.string_at(str, str_bytes, sym.st_name));
      }
    }
  }
  return info;
}

std::string find_command(const std::string& argv0, const std::string& path_list) {
  if (argv0.empty()) return {};
  if (argv0.find('/') != std::string::npos) return argv0;
  size_t from = 0;
  for (;;) {
    const size_t colon = path_list.find(':', from);
    const std::string dir =
        path_list.substr(from, colon == std::string::npos ? colon : colon - from);
    // An empty PATH entry is the current directory.
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + argv0;
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string::npos) return {};
    from = colon + 1;
  }
}

}  // namespace tasklens::platform
