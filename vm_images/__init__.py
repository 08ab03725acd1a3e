"""Guest image recipes (one folder per image, plus guest/ shared by all); see README.md."""
