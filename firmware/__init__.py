"""The referee: the app (the main loop, the entry flow, the screens drawn with
Pillow, the screen's care, the journal, the config) and its wings, each adding
its commands to ``euchre-referee`` (:mod:`.cli`): :mod:`.pi` (``run`` on a
Raspberry Pi), :mod:`.emulator` (``emulate`` in a terminal), :mod:`.link` (the
serial link: the device's service and the laptop's commands), :mod:`.club`
(club nights over MQTT)."""
