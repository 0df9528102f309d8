"""Views of a seat: what one seat may know, derived from the location codes only.

* `observation`: the observation vector, THE encoding (`ObservationLayout`, `ObservationEncoder`,
  `OBS_VERSION`).
* `view`: `SeatView`, what one seat may know, the input of every player.
* `counting`: a seat's card counting, as pure functions of a game and a seat.
"""
