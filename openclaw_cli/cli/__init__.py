"""Thin Typer commands: parse, call one core function, render, map errors."""
