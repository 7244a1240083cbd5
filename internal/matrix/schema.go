package matrix

import _ "embed"

// Schema is a JSON Schema (draft 2020-12) of the matrix file, for editors
// (yaml-language-server). schema_test.go keeps its keys equal to the
// parser's.
//
//go:embed schema.json
var Schema []byte
