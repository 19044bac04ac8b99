"""The queues in rotation: which queue hands out a URI next, and what happens when it is given back.

* :mod:`~crawler.frontier.rotation.scheduler`: QueueScheduler, the queue states (ready FIFO,
  snooze heap, inactive FIFOs) and the answer to "which queue now?";
* :mod:`~crawler.frontier.rotation.queue_release`: QueueRelease, a queue given back after its
  URI's fetch (server slot, snooze) and the wake-ups that causes;
* :mod:`~crawler.frontier.rotation.rotation_log`: RotationLog, the ``queues_rotated_late`` event
  of every frontier.
* :mod:`~crawler.frontier.rotation.wait_timer`: WaitTimer, which of the threads blocked in
  ``next()`` sleeps until the next timed event (both frontiers).

Nothing is imported here.
"""
