"""The application shell: starting the app, the main window, settings, style, help and the background-task
runner."""
