package matrix

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/settings"

	"go.yaml.in/yaml/v3"
)

// A trtexec line builds several optimization profiles as trtexec does
// (samples/common/sampleOptions.cpp, getOptimizationProfiles, in
// NVIDIA/TensorRT 10.x and 11.x): each --profile=N is followed directly by
// its shape flags, at most one each of --minShapes, --optShapes and
// --maxShapes; the indexes run from 0 with no gap, in any order; in a line
// with --profile, a shape flag that does not follow its --profile=N
// directly is an error. --shapes, which trtexec takes for the shapes it
// runs the engine with, adds nothing to a profile then: each input it
// names must be in every group, and it is ignored like the inference-only
// flags. One group is shapes, as a line without --profile gives; several
// are profiles. plan --trtexec writes profiles back the same way
// (settings' WriteTrtexec).

// profilesKey and shapesKey are the list setting --profile groups write
// and its one-item key, as the settings table names them.
var profilesKey, shapesKey = func() (string, string) {
	for _, row := range settings.All() {
		if row.Kind == settings.Profiles {
			return row.Key, row.ItemKey()
		}
	}
	panic("matrix: the settings table has no row of kind Profiles")
}()

// profileGroups are a line's --profile=N groups while it is read.
type profileGroups struct {
	on     bool               // the line has a --profile: its shape flags are grouped
	shapes map[int]*yaml.Node // each group's shapes mapping, by index
	words  map[int]string     // the --profile word that opened each
	open   int                // the group the next shape flag joins; -1: none
	bounds map[string]bool    // the bounds the open group has (min, opt, max)
	seen   bool               // a --profile came before the word being read
	prev   string             // the word before the one being read
	failed bool               // a flag was out of place: the groups are not what the line meant

	runShapes []string // the inputs --shapes names
}

// lineFlag is what a word of a line is to the groups.
type lineFlag int

const (
	otherFlag   lineFlag = iota
	profileFlag          // --profile=N
	boundFlag            // --minShapes, --optShapes, --maxShapes
	runFlag              // --shapes
)

func flagKind(info settings.FlagInfo) lineFlag {
	switch {
	case info.Class != settings.Mapped:
		return otherFlag
	case info.Flag.Codec == settings.ProfileCodec:
		return profileFlag
	case info.Flag.Codec == settings.ShapesCodec && info.Flag.Part != "":
		return boundFlag
	case info.Flag.Codec == settings.ShapesCodec:
		return runFlag
	}
	return otherFlag
}

// hasProfileFlag reports whether words hold a --profile.
func hasProfileFlag(words []string) bool {
	return slices.ContainsFunc(words, func(w string) bool {
		name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		return strings.HasPrefix(w, "--") && flagKind(settings.Classify(name)) == profileFlag
	})
}

func newProfileGroups(on bool) profileGroups {
	return profileGroups{on: on, shapes: map[int]*yaml.Node{}, words: map[int]string{}, open: -1}
}

// start opens group index, which word (--profile=N) gave; a message when
// the index was given already.
func (g *profileGroups) start(index int, word string) string {
	g.open = -1
	if prev, dup := g.words[index]; dup {
		g.failed = true
		return fmt.Sprintf("%s and %s both open profile %d; each index once", prev, word, index)
	}
	g.open, g.bounds = index, map[string]bool{}
	g.words[index] = word
	g.shapes[index] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	return ""
}

// admit says whether the bound flag word (of part min, opt or max) joins
// the open group; else why not, and no group is open after it.
func (g *profileGroups) admit(word, part string) string {
	why := g.placed(word, part)
	if why != "" {
		g.open, g.failed = -1, true
	}
	return why
}

func (g *profileGroups) placed(word, part string) string {
	name, _, _ := strings.Cut(word, "=")
	const rule = "in a line with --profile, each --minShapes, --optShapes and --maxShapes follows its --profile=N " +
		"directly, as trtexec reads them"
	switch {
	case !g.seen:
		return fmt.Sprintf("%s comes before the first --profile: %s", name, rule)
	case g.open < 0:
		return fmt.Sprintf("%s follows %s, not a --profile=N or its shape flags: %s", name, g.prev, rule)
	case g.bounds[part]:
		return fmt.Sprintf("%s is given twice after %s: each profile takes one --minShapes, --optShapes and --maxShapes", name, g.words[g.open])
	}
	g.bounds[part] = true
	return ""
}

// runNames is a settings.Writer that only keeps the inputs --shapes names.
type runNames struct{ names []string }

func (r *runNames) Set(string, string)           {}
func (r *runNames) Append(string, string)        {}
func (r *runNames) Put(string, []string, string) {}
func (r *runNames) Profile(int)                  {}
func (r *runNames) Fill(_ string, path []string, _ string) {
	if !slices.Contains(r.names, path[0]) {
		r.names = append(r.names, path[0])
	}
}

// readRunShapes reads --shapes in a line with --profile: the inputs it
// names, checked against the groups at the end (finish).
func (g *profileGroups) readRunShapes(info settings.FlagInfo, value string, hasValue bool) error {
	var r runNames
	if _, err := info.Read(&r, value, hasValue); err != nil {
		return err
	}
	g.runShapes = append(g.runShapes, r.names...)
	return nil
}

// finish checks the groups and gives keys the line's profiles: shapes for
// one group, profiles for several, in index order.
func (g *profileGroups) finish(k *trtexecKeys) []string {
	if !g.on || len(g.words) == 0 {
		return nil
	}
	indexes := slices.Sorted(maps.Keys(g.words))
	for i, index := range indexes {
		if index != i {
			return []string{fmt.Sprintf("%s: there is no --profile=%d; profiles are numbered from 0 with no gap, as trtexec numbers them", g.words[index], i)}
		}
	}
	var errs []string
	for _, index := range indexes {
		if len(g.shapes[index].Content) == 0 {
			errs = append(errs, fmt.Sprintf("%s has no shapes: follow it directly with --minShapes, --optShapes and --maxShapes", g.words[index]))
		}
	}
	for _, input := range g.runShapes {
		for _, index := range indexes {
			if _, ok := child(g.shapes[index], input); !ok {
				errs = append(errs, fmt.Sprintf("--shapes names %q, which %s does not: with --profile, --shapes is only what trtexec runs "+
					"the engine with; give %q's shapes in every --profile group", input, g.words[index], input))
				break
			}
		}
	}
	if len(errs) > 0 || g.failed {
		return errs // the shapes are not what the line meant: nothing more to say of them
	}
	for _, index := range indexes {
		g.shapes[index].Line, g.shapes[index].Column = k.at.Line, k.at.Column
	}
	// Errors about the profiles name the flag that grouped them.
	flag := k.flags[profilesKey]
	delete(k.flags, shapesKey)
	if len(indexes) == 1 {
		delete(k.flags, profilesKey)
		k.set(shapesKey, g.shapes[0])
		k.flags[shapesKey] = flag
		return nil
	}
	list := k.node(yaml.SequenceNode, "!!seq", "")
	for _, index := range indexes {
		list.Content = append(list.Content, g.shapes[index])
	}
	k.set(profilesKey, list)
	return nil
}

// repeats reports whether a line with --profile may give the flag of info
// more than once: --profile and the shape flags, once per group.
func (g *profileGroups) repeats(info settings.FlagInfo) bool {
	kind := flagKind(info)
	return g.on && (kind == profileFlag || kind == boundFlag)
}

// grouped is what the groups make of word w of a line with --profile,
// before it is read as any flag is: done when nothing more is to be done
// with it (--shapes, read here; a shape flag out of place, reported).
func (r *parsedLine) grouped(w string, info settings.FlagInfo, value string, hasValue bool) (done bool, err string) {
	g := &r.keys.groups
	defer func() { g.prev = w }()
	switch flagKind(info) {
	case profileFlag:
		g.seen, g.open = true, -1 // Read opens the group (Profile)
	case boundFlag:
		if why := g.admit(w, info.Flag.Part); why != "" {
			return true, why
		}
	case runFlag:
		g.open = -1
		if e := g.readRunShapes(info, value, hasValue); e != nil {
			return true, e.Error()
		}
		r.ignored = append(r.ignored, "--"+info.Flag.Name)
		return true, ""
	default:
		g.open = -1
	}
	return false, ""
}
