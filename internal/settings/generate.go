package settings

//go:generate go run ./generate
