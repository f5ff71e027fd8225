// Package approvebot holds what the binary embeds from the repository root: the example
// configuration, which documents every option and works as shipped.
package approvebot

import _ "embed"

// ExampleConfig is config.example.toml.
//
//go:embed config.example.toml
var ExampleConfig []byte
