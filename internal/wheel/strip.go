package wheel

import (
	"debug/elf"
	"fmt"
	"io"
	"strings"
)

// CheckStripped refuses an ELF file that still carries its symbol table or
// debug sections: a wheel ships its files stripped, the binary (go build
// -ldflags "-s -w") and the backends (linked with -s,
// native/backends/backends.mk) alike. What a library exports is in its
// dynamic symbol table, which stripping keeps: dlopen, dlsym and ctypes
// read nothing else.
func CheckStripped(file string, r io.ReaderAt) error {
	f, err := elf.NewFile(r)
	if err != nil {
		return fmt.Errorf("%s: not an ELF file: %w", file, err)
	}
	var kept []string
	for _, s := range f.Sections {
		if s.Type == elf.SHT_SYMTAB || strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			kept = append(kept, s.Name)
		}
	}
	if len(kept) > 0 {
		return fmt.Errorf("%s is not stripped (it has %s): link it with -s, as make's backends and binary are", file, strings.Join(kept, ", "))
	}
	return nil
}
