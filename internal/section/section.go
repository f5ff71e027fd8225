// Package section is what every channel's configuration section shares: a field left
// empty takes its named default, and a section is used only once its defaults are applied
// and it validates. Each channel package declares its own Config with its constants.
package section

// Config is a channel's configuration section (a pointer to it: Defaults fills it in).
type Config[C any] interface {
	*C
	// Defaults fills every field left empty with its default.
	Defaults()
	// Validate checks every value; errors name the key.
	Validate() error
}

// Default sets *field to value when it is still the zero value.
func Default[T comparable](field *T, value T) {
	var zero T
	if *field == zero {
		*field = value
	}
}

// Ready is cfg with its defaults applied, validated, and with the secrets checked against
// it by checkSecrets (whose errors must never contain a secret).
func Ready[C any, P Config[C], S any](cfg C, secrets S, checkSecrets func(C, S) error) (C, error) {
	P(&cfg).Defaults()
	if err := P(&cfg).Validate(); err != nil {
		return cfg, err
	}
	if err := checkSecrets(cfg, secrets); err != nil {
		return cfg, err
	}
	return cfg, nil
}
