//go:build race

package testserver

const raceEnabled = true
