/*
 * What the loader checks on a plugin file before dlopen, because dlopen
 * runs the library's constructors inside the host before any symbol can be
 * looked up: the file is a regular file (opened without blocking, so a FIFO
 * named like a plugin is refused, never waited on), its bytes match the
 * [plugin.NAME] sha256 pin when there is one, and it is an ELF shared object
 * of this machine whose dynamic symbol table defines sy_plugin_query. A file
 * that fails any of these never runs a line of its code.
 */
#include "plugin_file.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <sha2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if UINTPTR_MAX > 0xffffffffu
#define SY_ELFCLASS ELFCLASS64
typedef Elf64_Ehdr ehdr_t;
typedef Elf64_Shdr shdr_t;
typedef Elf64_Sym sym_t;
#define SY_ST_TYPE ELF64_ST_TYPE
#define SY_ST_BIND ELF64_ST_BIND
#else
#define SY_ELFCLASS ELFCLASS32
typedef Elf32_Ehdr ehdr_t;
typedef Elf32_Shdr shdr_t;
typedef Elf32_Sym sym_t;
#define SY_ST_TYPE ELF32_ST_TYPE
#define SY_ST_BIND ELF32_ST_BIND
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SY_ELFDATA ELFDATA2LSB
#else
#define SY_ELFDATA ELFDATA2MSB
#endif

static bool span_ok(size_t size, uint64_t off, uint64_t len) { return off <= size && len <= size - off; }

/* 1: the dynamic symbol table defines `name`; 0: it does not; -1: not an ELF
 * shared object of this machine (why says what). Every offset is checked
 * against the file size: the file is untrusted. */
static int elf_defines(const uint8_t *p, size_t size, const char *name, char *why, size_t why_len)
{
    const ehdr_t *eh = (const ehdr_t *)(const void *)p;
    if (size < sizeof *eh || memcmp(p, ELFMAG, SELFMAG)) {
        snprintf(why, why_len, "not an ELF file");
        return -1;
    }
    if (p[EI_CLASS] != SY_ELFCLASS || p[EI_DATA] != SY_ELFDATA || eh->e_type != ET_DYN) {
        snprintf(why, why_len, "not an ELF shared object of this machine (class %u, data %u, type %u)", p[EI_CLASS],
                 p[EI_DATA], (unsigned)eh->e_type);
        return -1;
    }
    if (eh->e_shentsize != sizeof(shdr_t) ||
        !span_ok(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(shdr_t)) || eh->e_shoff % _Alignof(shdr_t)) {
        snprintf(why, why_len, "ELF section header table out of the file's bounds");
        return -1;
    }
    const shdr_t *sh = (const shdr_t *)(const void *)(p + eh->e_shoff);
    for (uint32_t i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM)
            continue;
        if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_entsize != sizeof(sym_t) ||
            !span_ok(size, sh[i].sh_offset, sh[i].sh_size) || sh[i].sh_offset % _Alignof(sym_t)) {
            snprintf(why, why_len, "ELF dynamic symbol table out of the file's bounds");
            return -1;
        }
        const shdr_t *str = &sh[sh[i].sh_link];
        if (str->sh_type != SHT_STRTAB || !span_ok(size, str->sh_offset, str->sh_size)) {
            snprintf(why, why_len, "ELF dynamic string table out of the file's bounds");
            return -1;
        }
        const char *strs = (const char *)p + str->sh_offset;
        size_t nstr = (size_t)str->sh_size, nlen = strlen(name);
        const sym_t *sym = (const sym_t *)(const void *)(p + sh[i].sh_offset);
        size_t nsym = (size_t)(sh[i].sh_size / sizeof(sym_t));
        for (size_t k = 0; k < nsym; k++) {
            uint64_t at = sym[k].st_name;
            if (at >= nstr || nstr - at <= nlen || memcmp(strs + at, name, nlen + 1))
                continue;
            int bind = SY_ST_BIND(sym[k].st_info);
            if (sym[k].st_shndx != SHN_UNDEF && SY_ST_TYPE(sym[k].st_info) == STT_FUNC &&
                (bind == STB_GLOBAL || bind == STB_WEAK))
                return 1;
        }
    }
    return 0;
}

sy_plugin_file_verdict sy_plugin_file_check(const char *path, const char *pin, const char *symbol, char *why,
                                            size_t why_len)
{
    struct stat sb;
    int fd = sy_open_regular(path, &sb);
    if (fd == -2) {
        snprintf(why, why_len, "not a regular file (%s)", sy_file_kind(sb.st_mode));
        return SY_PLUGIN_FILE_BAD;
    }
    if (fd < 0) {
        snprintf(why, why_len, "%s: %s", pin ? "cannot read the file to check its sha256 pin" : "cannot open",
                 strerror(errno));
        return SY_PLUGIN_FILE_BAD;
    }
    size_t size = (size_t)sb.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(why, why_len, "%s: mmap: %s", pin ? "cannot read the file to check its sha256 pin" : "cannot read",
                 strerror(errno));
        return SY_PLUGIN_FILE_BAD;
    }
    sy_plugin_file_verdict v = SY_PLUGIN_FILE_OK;
    if (pin) {
        char digest[SHA256_DIGEST_STRING_LENGTH];
        SHA2_CTX ctx;
        SHA256Init(&ctx);
        if (size)
            SHA256Update(&ctx, map, size);
        SHA256End(&ctx, digest);
        if (strcasecmp(digest, pin)) {
            snprintf(why, why_len, "%s", digest);
            v = SY_PLUGIN_FILE_PIN_MISMATCH;
        }
    }
    if (v == SY_PLUGIN_FILE_OK) {
        int d = elf_defines(map, size, symbol, why, why_len);
        if (d < 0)
            v = SY_PLUGIN_FILE_BAD;
        else if (d == 0)
            v = SY_PLUGIN_FILE_NO_SYMBOL;
    }
    if (map)
        munmap(map, size);
    return v;
}
