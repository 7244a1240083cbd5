// Package cli is trt-action's command line: Command.Main(args) runs one
// subcommand with injected streams and environment and returns the exit
// code. A subcommand returns an error only; exitCode (exit.go) turns it
// into the code.
package cli

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/earlysignal"
	"github.com/trt-action/trt-action/internal/shard"
)

// Version is set at link time (-ldflags "-X .../internal/cli.Version=...").
var Version = "0.1.0-dev"

// Command is one invocation of trt-action.
type Command struct {
	Streams *Streams
	Getenv  func(string) string
	// Executable is the binary that workers run as (the hidden worker subcommand).
	Executable func() (string, error)
	// Signals hands a command that handles them SIGINT and SIGTERM, caught
	// since the process started, until stop is called; nil in tests.
	Signals func() (signals <-chan os.Signal, stop func())
	// NoSignals gives the signals their default action back, for a command
	// that does not handle them.
	NoSignals func()

	// signals holds SIGINT and SIGTERM from the start of a command that
	// handles them, so one that comes while the matrix loads still ends
	// the run with a report and 130 or 143.
	signals <-chan os.Signal
}

// New returns a Command on the process's own streams, environment and signals.
func New() *Command {
	return &Command{
		Streams:    SystemStreams(),
		Getenv:     os.Getenv,
		Executable: os.Executable,
		Signals:    earlysignal.Claim,
		NoSignals:  earlysignal.Release,
	}
}

// subcommand is one verb: trt-action VERB [flags].
type subcommand struct {
	summary string
	hidden  bool
	signals bool // it handles SIGINT and SIGTERM itself (from c.signals)
	run     func(c *Command, args []string) error
}

// subcommands are every verb; each one's run is in its own file.
var subcommands = map[string]subcommand{
	"build":       {summary: "run the builds of a matrix file", signals: true, run: runBuild},
	"run":         {summary: "run one command that builds TensorRT engines (a builder script) as a build: run [flags] -- COMMAND", signals: true, run: runRun},
	"merge":       {summary: "join the reports of sharded jobs into one report, summary and JUnit file", run: runMerge},
	"cache":       {summary: "the engine cache: cache key|ls|prune|verify", run: runCache},
	"validate":    {summary: "check a matrix file and report every error", run: runValidate},
	"plan":        {summary: "list the builds a matrix file expands to", run: runPlan},
	"schema":      {summary: "print the JSON Schema of the matrix file", run: runSchema},
	"trace":       {summary: "convert an ANSI progress recording to a trace: trace convert FILE|-", run: runTrace},
	"version":     {summary: "print the version and the backends compiled in", run: runVersion},
	workerCommand: {hidden: true, summary: "run one build (internal)", run: runWorker},
	reaperCommand: {hidden: true, signals: true, summary: "run a script build's command (internal)", run: runReaper},
}

// Main runs one subcommand and returns the process exit code.
func (c *Command) Main(args []string) int {
	return c.end(c.run(args))
}

// end prints the error a command ended with and returns its exit code.
func (c *Command) end(err error) int {
	code := exitCode(err)
	c.printError(err, code)
	return code
}

// run runs the subcommand args name.
func (c *Command) run(args []string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = internalError{p, debug.Stack()}
		}
	}()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		c.usage(c.Streams.Out)
		if len(args) == 0 {
			return usagef("name a command")
		}
		return nil
	}
	if args[0] == "--version" || args[0] == "-V" {
		// What every other program answers: the version line alone (the
		// backends are `trt-action version`'s).
		fmt.Fprintln(c.Streams.Out, versionLine())
		return nil
	}
	sub, ok := subcommands[args[0]]
	if !ok {
		c.usage(c.Streams.Err)
		return usagef("unknown command %q", args[0])
	}
	switch {
	case sub.signals && c.Signals != nil:
		signals, stop := c.Signals()
		defer stop()
		c.signals = signals
	case c.NoSignals != nil:
		c.NoSignals()
	}
	return sub.run(c, args[1:])
}

// internalError is a panic: a bug, with where it happened.
type internalError struct {
	value any
	stack []byte
}

func (e internalError) Error() string { return fmt.Sprintf("internal error: %v\n%s", e.value, e.stack) }

// printError prints the error a command ended with on stderr, unless the
// run already said it: help asked for, or a run's verdict (its headline
// was its last line). Outputs a finished run could not write end with the
// exit code that follows, as the last line.
func (c *Command) printError(err error, code int) {
	var end runEnd
	var panicked internalError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &end):
		if end.outputs != nil {
			c.printUntrusted(c.Streams.Err, fmt.Sprintf("%v: exit %d\n", end.outputs, code))
		}
	case errors.As(err, &panicked):
		fmt.Fprintf(c.Streams.Err, "trt-action: %v", panicked)
	default:
		c.printUntrusted(c.Streams.Err, errorText(err)+"\n")
	}
}

// errorText is how an error is printed: "trt-action: message", except a
// positioned one (FILE:LINE:COL: message, or several lines of them), which
// is printed as it is, so editors and problem matchers can read it.
func errorText(err error) string {
	if joined, ok := err.(interface{ Unwrap() []error }); ok { // several problems, one a line
		var lines []string
		for _, e := range joined.Unwrap() {
			lines = append(lines, errorText(e))
		}
		return strings.Join(lines, "\n")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || positioned.MatchString(msg) {
		return msg
	}
	return "trt-action: " + msg
}

// positioned matches an error that starts with FILE:LINE: or FILE:LINE:COL:.
var positioned = regexp.MustCompile(`^[^\s:][^:\n]*:[0-9]+(:[0-9]+)?: `)

func (c *Command) usage(w io.Writer) {
	fmt.Fprintf(w, "trt-action %s: build TensorRT engines from a build matrix, observably and cancelably.\n\nUsage: trt-action COMMAND [flags]\n\nCommands:\n", Version)
	names := make([]string, 0, len(subcommands))
	for name, s := range subcommands {
		if !s.hidden {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-10s %s\n", name, subcommands[name].summary)
	}
	fmt.Fprintf(w, "\nRun 'trt-action COMMAND -h' for a command's flags; 'trt-action --version' (-V) prints the version.\n")
}

// printUntrusted writes text that quotes input we do not control (a matrix
// file's values, paths, library messages). In GitHub Actions it goes inside
// a stop-commands fence, since the runner would otherwise act on a "::" line
// start or on "##[" anywhere in a line.
func (c *Command) printUntrusted(w io.Writer, text string) {
	if !c.actions().InActions() {
		io.WriteString(w, text)
		return
	}
	fence, err := actions.NewFence(rand.Reader)
	if err != nil { // no randomness: make each line inert instead
		io.WriteString(w, actions.Neutralise(text))
		return
	}
	io.WriteString(w, fence.Wrap(actions.SplitLines(strings.TrimSuffix(text, "\n"))...))
}

// actions is the GitHub Actions environment as this command sees it.
func (c *Command) actions() *actions.Actions {
	return actions.New(actions.Config{Getenv: c.Getenv})
}

// newFlags returns a flag set that reports errors as usage errors.
func (c *Command) newFlags(name, args string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package prints its own message and the whole usage on a
	// bad flag; parse reports one clearer line instead, and calls Usage
	// for -h only.
	fs.SetOutput(io.Discard)
	fs.Usage = func() { c.printUsage(fs, args) }
	return fs
}

// printUsage is a command's -h.
func (c *Command) printUsage(fs *flag.FlagSet, args string) {
	fmt.Fprintf(c.Streams.Err, "Usage: trt-action %s %s\n", fs.Name(), args)
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if !hasFlags {
		return
	}
	fmt.Fprintf(c.Streams.Err, "\nFlags:\n")
	var defaults strings.Builder
	fs.SetOutput(&defaults)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	io.WriteString(c.Streams.Err, flagLine.ReplaceAllStringFunc(defaults.String(), func(line string) string {
		return "  " + dashed(strings.TrimPrefix(line, "  -"))
	}))
}

// flagLine is where the flag package's usage names a flag, as -name.
var flagLine = regexp.MustCompile(`(?m)^  -[A-Za-z0-9][A-Za-z0-9_-]*`)

// dashed is a flag's name as the docs write it: -f for a letter,
// --name for a word (the flag package takes both, and prints -name).
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagMention is where the flag package's errors name a flag, as -name.
var flagMention = regexp.MustCompile(`(not defined: |needs an argument: | for flag | for )-([A-Za-z0-9][^\s:]*)`)

// parse parses flags; a bad flag is a usage error. Flags the user did not
// give are taken from the Action inputs of the same name (INPUT_*), where
// inputs names the flags that have one (flag name to input name).
func (c *Command) parse(fs *flag.FlagSet, args []string, inputs map[string]string) error {
	_, err := c.parseGiven(fs, args, inputs)
	return err
}

// parseGiven is parse that also says which flags the command line gave
// (inputs not counted).
func (c *Command) parseGiven(fs *flag.FlagSet, args []string, inputs map[string]string) (map[string]bool, error) {
	usage := fs.Usage
	fs.Usage = func() {}
	err := parseInterspersed(fs, args)
	fs.Usage = usage
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return nil, err
		}
		return nil, usageError{explainFlagError(fs, err.Error())}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	gha := c.actions()
	for flagName, input := range inputs {
		if given[flagName] {
			continue
		}
		if v := gha.Input(input); v != "" {
			if err := fs.Set(flagName, v); err != nil {
				return nil, usagef("input %q: %q is not valid: %s", input, v, allowed(fs.Lookup(flagName), err))
			}
		}
	}
	return given, nil
}

// parseInterspersed parses flags before, between and after arguments
// ("build my.yml --jobs 2", "merge a.json b.json --report m.json"), as the
// forms in docs/commands.md read; after "--" everything is an argument. fs.Args()
// then holds every argument, in order.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

// badValue is the flag package's message for a value that did not parse
// (with its flag dashed).
var badValue = regexp.MustCompile(`^(invalid (?:boolean )?value ".*" for (?:flag )?-{1,2}([^:]+)): `)

// explainFlagError names flags as the docs do (--jobs, not -jobs),
// and replaces what the flag package says after a bad value ("parse
// error") with what the flag allows.
func explainFlagError(fs *flag.FlagSet, msg string) string {
	msg = flagMention.ReplaceAllStringFunc(msg, func(m string) string {
		parts := flagMention.FindStringSubmatch(m)
		return parts[1] + dashed(parts[2])
	})
	if strings.HasPrefix(msg, "flag provided but not defined") {
		return fmt.Sprintf("%s; run 'trt-action %s -h' for the flags", msg, fs.Name())
	}
	m := badValue.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	f := fs.Lookup(m[2])
	if f == nil {
		return msg
	}
	return m[1] + ": " + allowed(f, errors.New(strings.TrimPrefix(msg, m[0])))
}

// allowed says what a flag takes, by the type of its value; err, the
// value's own complaint, is kept where it says more than "parse error".
func allowed(f *flag.Flag, err error) string {
	getter, ok := f.Value.(flag.Getter)
	if !ok {
		return err.Error()
	}
	switch getter.Get().(type) {
	case time.Duration:
		return "want a duration like 90s, 15m or 1h30m"
	case int:
		if strings.Contains(err.Error(), "out of range") {
			return "out of range; want a whole number"
		}
		return "want a whole number"
	case bool:
		return "want true or false"
	}
	return err.Error()
}

// listFlag is a repeatable flag that also splits commas: --only a --only b,c.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	// Names may hold commas; plan --github-matrix writes them as \, .
	*l = append(*l, shard.SplitOnly(v)...)
	return nil
}
