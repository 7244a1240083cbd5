// Package text is the one home for what may be done to text trt-action does
// not control: model, build and phase names, TensorRT's log lines, reasons
// that quote them. Every renderer (job summary, pull-request comment, check
// run, JUnit, log lines, terminal) passes such text through here, so one rule
// decides what a name like "fix-@octocat" or "x\u202Eexe.onnx" becomes, and
// the fuzz test of the renderers checks that rule in all of them at once.
//
// The order is: clean (Line, lines), cut (CutRunes, CutAtLine), then escape
// (Markdown, HTML), so that a cut never splits an escape such as "&amp;".
// Neutral may come before a cut to a limit set by GitHub: a cut only drops a
// suffix and adds "…", which can neither make a mention nor revive one.
package text
