"""timeman"""
