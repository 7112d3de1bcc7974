"""The referee app: entry flow, screens, persistence, serial service, main loop."""
