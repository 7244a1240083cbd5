package cache

import (
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// An entry's files. A build without run: has one, its engine; a build
// with run: has every engine it declares (engine:), then every other file
// it declares (outputs:), in the order declared. Each is kept in the
// entry's folder, and in a shared store, under a name that its role and
// its place among the files of that role make (fileName: engine,
// engine-2, ..., output-1, output-2, ...), so no name read from metadata
// ever becomes a path; entry.json lists them with the path the build
// declared, their size and their SHA-256. Where a hit's files go is never
// read from the entry either: the build says (Decl), and an entry whose
// files are not the ones the build declares is not its entry.

// What a file of an entry is to its build.
const (
	RoleEngine = "engine" // an engine: the build's own, or one a command declares
	RoleOutput = "output" // a file a command declares under outputs:, kept with its engines
)

// File is one file of an entry, as entry.json lists it.
type File struct {
	// Name is the file's name in the entry's folder and in a shared
	// store: fileName of its role and place.
	Name string `json:"name"`
	Role string `json:"role"` // RoleEngine or RoleOutput
	// Path is where a build with run: declared it, relative to its
	// workdir (part of its key); "" for the engine of a build without
	// run:, which goes wherever that build's engine path is.
	Path   string `json:"path,omitempty"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Decl is one file a build declares, in the order its entry keeps them:
// its role and path as the key holds them (File.Role, File.Path) and
// where the file is on this machine (Local: where the build wrote it, to
// store; where a hit puts it, to fetch or pull).
type Decl struct {
	Role, Path string
	Local      string
	// SHA256 is, for a store, what the build found the file to hold when
	// it ended ("": not known); a file that changed since is not stored.
	SHA256 string
}

// EngineDecl is the one file of a build without run:: its engine, at
// path.
func EngineDecl(path, sha256 string) []Decl {
	return []Decl{{Role: RoleEngine, Local: path, SHA256: sha256}}
}

// fileName is the name of a file of role that is the nth (from 1) of its
// role in its entry.
func fileName(role string, n int) string {
	if role == RoleEngine && n == 1 {
		return engineName
	}
	return fmt.Sprintf("%s-%d", role, n)
}

// fileNames are the names of files of these roles, in order.
func fileNames(roles []string) []string {
	seen := map[string]int{}
	out := make([]string, len(roles))
	for i, r := range roles {
		seen[r]++
		out[i] = fileName(r, seen[r])
	}
	return out
}

// checkFileList says why the files metadata lists are not an entry's, ""
// when they are: at least one, an engine first, every engine before
// every output, each named as its place says, with a size and a SHA-256.
func checkFileList(files []File) string {
	if len(files) == 0 {
		return "its metadata lists no files"
	}
	roles := make([]string, len(files))
	for i, f := range files {
		roles[i] = f.Role
	}
	names := fileNames(roles)
	for i, f := range files {
		switch {
		case f.Role != RoleEngine && f.Role != RoleOutput:
			return fmt.Sprintf("its metadata gives file %d the role %s, which is neither %s nor %s", i+1, text.QuotedCut(f.Role), RoleEngine, RoleOutput)
		case i == 0 && f.Role != RoleEngine:
			return "its metadata lists an output before any engine"
		case i > 0 && f.Role == RoleEngine && files[i-1].Role == RoleOutput:
			return "its metadata lists an engine after an output"
		case f.Name != names[i]:
			return fmt.Sprintf("its metadata names file %d %s, not %s", i+1, text.QuotedCut(f.Name), names[i])
		case f.Size < 0 || !Key(f.SHA256).Valid(): // a SHA-256 is written as a key is
			return fmt.Sprintf("its metadata gives file %s %d bytes and SHA-256 %s, which are not a size and a SHA-256", f.Name, f.Size, text.QuotedCut(f.SHA256))
		}
	}
	return ""
}

// otherFiles says how an entry's files differ from the ones a build
// declares (roles and paths, in order), "" when they do not. The key
// holds what a build declares, so an entry of its key that differs was
// not made for it.
func otherFiles(files []File, want []Decl) string {
	same := len(files) == len(want)
	for i := 0; same && i < len(files); i++ {
		same = files[i].Role == want[i].Role && files[i].Path == want[i].Path
	}
	if same {
		return ""
	}
	return fmt.Sprintf("its files are %s, and the build declares %s", describeFiles(files), describeDecls(want))
}

func describeFiles(files []File) string {
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = describeFile(f.Role, f.Path)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func describeDecls(decls []Decl) string {
	parts := make([]string, len(decls))
	for i, d := range decls {
		parts[i] = describeFile(d.Role, d.Path)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func describeFile(role, path string) string {
	if path == "" {
		return role
	}
	return role + " " + text.QuotedCut(path)
}

// Bytes is what the entry's files hold.
func (e Entry) Bytes() int64 {
	var n int64
	for _, f := range e.Files {
		n += f.Size
	}
	return n
}

// Engine is the entry's first file, its (first) engine; zero for an entry
// whose metadata lists none (a broken one in a listing).
func (e Entry) Engine() File {
	if len(e.Files) == 0 {
		return File{}
	}
	return e.Files[0]
}

// fileMismatch says how a file's copy (its SHA-256 and size) differs from
// the file its entry lists, "" when it does not.
func fileMismatch(f File, sum string, size int64) string {
	if sum == f.SHA256 && size == f.Size {
		return ""
	}
	return fmt.Sprintf("its %s's SHA-256 is %s (%d bytes), the entry says %s (%d bytes)", f.Name, sum, size, f.SHA256, f.Size)
}
