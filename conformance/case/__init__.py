"""What a case is."""
