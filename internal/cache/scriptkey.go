package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/pyenv"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// A build with run: has a key when it declares its inputs (inputs:):
// trt-action cannot know what else its program reads, so the build says,
// as Bazel's srcs and GitHub's hashFiles do. Its key holds, beside the
// backend, the library and (for tensorrt) the GPU, as any build's does:
//
//   - the command as written (its words), the names of the variables its
//     env: sets with each value's SHA-256 (a value never shows in cache key
//     --explain), and its workdir, relative to the workspace (so runners
//     that check the repository out elsewhere share entries);
//   - the engines and outputs it declares, relative to its workdir (they
//     are what its entry holds, and where a hit puts them);
//   - every input file, by its name relative to the workdir and its
//     content;
//   - the program its first word runs (internal/pyenv, read from files,
//     never run): for a Python program, the interpreter's content and the
//     name and version of every distribution installed in its
//     environment; for any other, the content of the file the word names.
//
// The library is the one its program's bindings load, where its Python
// environment holds one (Hasher.BuildEnv).

// ErrNoInputs is why a build with run: without inputs: has no key: what
// decides its engines (the files its program reads, the code it runs) is
// not known to trt-action.
var ErrNoInputs = errors.New("not cached: a build with run: is cached only when it declares the files that decide its engines (inputs:)")

// scriptDoc is a build with run:'s part of its key.
type scriptDoc struct {
	Command []string          `json:"command"`
	Env     map[string]string `json:"env,omitempty"` // name -> SHA-256 of the value
	Workdir string            `json:"workdir"`
	Engines []string          `json:"engines"`
	Outputs []string          `json:"outputs,omitempty"`
	Inputs  map[string]string `json:"inputs"` // name relative to the workdir -> SHA-256
	Program programDoc        `json:"program"`
}

// programDoc is what the command's first word runs.
type programDoc struct {
	Python *pythonDoc `json:"python,omitempty"`
	File   string     `json:"file,omitempty"` // SHA-256 of the program's file, when it is not Python
}

// pythonDoc is the Python environment a Python program runs in.
type pythonDoc struct {
	Interpreter   string            `json:"interpreter"`   // SHA-256 of the interpreter's file
	Distributions map[string]string `json:"distributions"` // normalized name -> version
}

// programQuery is what finding a command's program depends on.
type programQuery struct {
	argv0, dir, path, home, noUserSite string
}

// programFacts is what one look at a command's program found.
type programFacts struct {
	prog  pyenv.Program
	dists map[string]string // a Python program's distributions
	err   error
}

// program finds what s's command runs, and a Python program's
// distributions, once per run for each command and environment (a
// program's packages do not change while a run looks at them).
func (h *Hasher) program(s *matrix.Script) programFacts {
	getenv := scriptGetenv(s)
	q := programQuery{s.Argv[0], s.Workdir, getenv("PATH"), getenv("HOME"), getenv("PYTHONNOUSERSITE")}
	h.mu.Lock()
	facts, ok := h.programs[q]
	h.mu.Unlock()
	if ok {
		return facts
	}
	facts.prog, facts.err = pyenv.Find(s.Argv[0], s.Workdir, getenv)
	if facts.err == nil && facts.prog.Python != nil {
		facts.dists, facts.err = facts.prog.Python.Distributions()
	}
	h.mu.Lock()
	h.programs[q] = facts
	h.mu.Unlock()
	return facts
}

// scriptGetenv reads the command's environment as it finds its program:
// env: first, then trt-action's own (internal/build adds only the hook's
// variables).
func scriptGetenv(s *matrix.Script) func(string) string {
	return func(name string) string {
		for _, kv := range s.Env {
			if n, v, _ := strings.Cut(kv, "="); n == name {
				return v
			}
		}
		return os.Getenv(name)
	}
}

// script is s's part of the key; files gets, for each part that is a
// file's content, the file (cache key --explain names it).
func (h *Hasher) script(ctx context.Context, s *matrix.Script, files map[string]string) (*scriptDoc, error) {
	if !s.Cached() {
		return nil, ErrNoInputs
	}
	d := &scriptDoc{Command: s.Argv, Workdir: relativeWorkdir(s), Inputs: map[string]string{}}
	for _, kv := range s.Env {
		name, value, _ := strings.Cut(kv, "=")
		if d.Env == nil {
			d.Env = map[string]string{}
		}
		sum := sha256.Sum256([]byte(value))
		d.Env[name] = hex.EncodeToString(sum[:])
	}
	for _, e := range s.Engines {
		d.Engines = append(d.Engines, declaredPath(s, e))
	}
	for _, o := range s.Outputs {
		d.Outputs = append(d.Outputs, declaredPath(s, o))
	}
	names, problems := s.InputFiles()
	if len(problems) > 0 {
		p := problems[0]
		return nil, fmt.Errorf("inputs: %q %s (patterns are relative to workdir %s)", s.Inputs[p.Pattern], p.Msg, s.Workdir)
	}
	if len(names) == 0 {
		return nil, errors.New("inputs: every file the patterns match is excluded by a ! pattern")
	}
	for _, name := range names {
		file := filepath.Join(s.Workdir, filepath.FromSlash(name))
		sum, err := h.file(ctx, file)
		if err != nil {
			return nil, fmt.Errorf("inputs: %w", err)
		}
		d.Inputs[name] = sum
		files["script.inputs."+name] = file
	}
	p := h.program(s)
	if p.err != nil {
		return nil, fmt.Errorf("run: %w", p.err)
	}
	if py := p.prog.Python; py != nil {
		sum, err := h.file(ctx, py.Interpreter)
		if err != nil {
			return nil, fmt.Errorf("run: its Python interpreter: %w", err)
		}
		d.Program.Python = &pythonDoc{Interpreter: sum, Distributions: p.dists}
		files["script.program.python.interpreter"] = py.Interpreter
		return d, nil
	}
	sum, err := h.file(ctx, p.prog.Path)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	d.Program.File = sum
	files["script.program.file"] = p.prog.Path
	return d, nil
}

// relativeWorkdir is s's workdir as its key holds it: relative to its
// workspace (links resolved) when it lies in it, else absolute.
func relativeWorkdir(s *matrix.Script) string {
	real := runfiles.Real(s.Workdir)
	if s.Workspace != "" && runfiles.Within(real, s.Workspace) {
		if rel, err := filepath.Rel(s.Workspace, real); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return real
}

// declaredPath is a file s declares (an engine, an output), as its key and
// its entry hold it: relative to its workdir, / between parts.
func declaredPath(s *matrix.Script, p string) string {
	rel, err := filepath.Rel(s.Workdir, runfiles.Abs(p))
	if err != nil {
		return filepath.ToSlash(runfiles.Abs(p))
	}
	return filepath.ToSlash(rel)
}

// ScriptDecls are the files a build with run: declares, as its entry
// holds them (its engines, then its outputs, each with its path relative
// to its workdir), at the paths the build writes them.
func ScriptDecls(s *matrix.Script) []Decl {
	var out []Decl
	for _, e := range s.Engines {
		out = append(out, Decl{Role: RoleEngine, Path: declaredPath(s, e), Local: e})
	}
	for _, o := range s.Outputs {
		out = append(out, Decl{Role: RoleOutput, Path: declaredPath(s, o), Local: o})
	}
	return out
}
