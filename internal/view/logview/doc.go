// Package logview writes a running build matrix as log lines: the plain view
// for any log and the GitHub Actions view (groups, fenced text, annotations),
// both composed by one line composer (lines.go).
package logview
