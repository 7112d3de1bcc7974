"""Helpers shared by the tests (no tests here): reached as ``support.*``
through pytest's ``pythonpath = ["tests"]`` (pyproject.toml).

- :mod:`support.clock`: the one hand-moved clock;
- :mod:`support.driver_fakes`: a recording I2C bus, SSD1306/SH1106 RAM models,
  a bouncing gpiozero MockPin;
- :mod:`support.app_kit`: driving a :class:`~firmware.app.Referee` with mock pins;
- :mod:`support.serial_kit`: a device on a real pseudo-terminal and a pyserial host;
- :mod:`support.crash_child`: the referee as a separate process to be killed.
- :mod:`support.strace_kit`: flushes refused (EIO, ENOSPC) or killed at, for
  real, with strace's ``inject``, on that process or any command.
- :mod:`support.broker`: a real mosquitto on a free port (the ``mosquitto``
  fixture; ``Mosquitto(dir)`` for a broker a test restarts; ``include=`` for one
  run with ``club setup``'s files).
- :mod:`support.mqtt_peer`: a plain paho client with a login or none, for the
  club's security tests and ``bench/club_attacks.py``.
"""
