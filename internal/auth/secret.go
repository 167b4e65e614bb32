package auth

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// secretBytes is the size of a generated HS256 secret.
const secretBytes = 32

// GenerateSecret returns 32 random bytes for HS256.
func GenerateSecret() ([]byte, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("auth: generate secret: %w", err)
	}
	return b, nil
}

// LoadOrCreateSecret returns the hex secret stored at path. On first use it
// generates one and writes it to a new file of mode 0600, creating the
// folder (0700) if needed. It refuses a file that others may read, and
// errors never contain the secret.
func LoadOrCreateSecret(path string) ([]byte, error) {
	s, err := loadSecret(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("auth: secret folder: %w", err)
	}
	if s, err = GenerateSecret(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another process created it first
		return loadSecret(path)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: create secret file: %w", err)
	}
	_, err = f.WriteString(hex.EncodeToString(s) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("auth: write secret file %s: %w", path, err)
	}
	return s, nil
}

// loadSecret reads a hex secret; a missing file is reported as
// fs.ErrNotExist.
func loadSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("auth: read secret file: %w", err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("auth: secret file: %w", err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			return nil, fmt.Errorf("auth: secret file %s has mode %04o; it must be private (chmod 600)", path, perm)
		}
	}
	// Not wrapping hex's error: it quotes the offending character.
	s, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("auth: secret file %s does not hold a hex secret", path)
	}
	if len(s) < minSecretBytes {
		return nil, fmt.Errorf("auth: secret file %s holds fewer than %d bytes", path, minSecretBytes)
	}
	return s, nil
}
