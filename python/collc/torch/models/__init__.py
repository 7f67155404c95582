"""Models built from their published configs, random weights, nothing downloaded."""
