"""The security suite's helpers: worlds, commands, kill points, the hostile fake server and disk states."""
