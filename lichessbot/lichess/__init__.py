"""lichess"""
