# Source: https://github.com/timmeinhardt/trackformer/blob/1410735f273a68a3e28d148e4172ea7033a5a211/src/trackformer/models/tracker.py
# Report: fix for issue #101 (GPU memory grows with sequence length): per-track history kept in bounded deques, since the tracker only ever reads hs_embed[-1] and the last positions
# Shape: Tracker.step still appends GPU embeddings/boxes every frame, but Track.__init__ makes hs_embed and last_pos deque(maxlen=...), so each track holds a fixed number of tensors
# Expect: near-miss: must be silent
from collections import deque

import torch
from torchvision.ops.boxes import clip_boxes_to_image

POS_HISTORY = 2
EMBED_HISTORY = 1


class Track(object):
    def __init__(self, pos, score, track_id, hs_embed):
        self.id = track_id
        self.pos = pos
        self.last_pos = deque([pos.clone()], maxlen=POS_HISTORY)
        self.score = score
        self.count_inactive = 0
        self.count_termination = 0
        self.hs_embed = deque([hs_embed], maxlen=EMBED_HISTORY)


class Tracker:
    def __init__(self, obj_detector, obj_detector_post, cfg):
        self.obj_detector = obj_detector
        self.obj_detector_post = obj_detector_post
        self.detection_obj_score_thresh = cfg['detection_obj_score_thresh']
        self.track_obj_score_thresh = cfg['track_obj_score_thresh']
        self.reid_score_thresh = cfg['reid_score_thresh']
        self.inactive_patience = float(cfg['inactive_patience'])
        self.steps_termination = cfg['steps_termination']
        self.prev_frame_dist = cfg['prev_frame_dist']
        self.reset()

    @property
    def num_object_queries(self):
        return self.obj_detector.num_queries

    @property
    def device(self):
        return next(self.obj_detector.parameters()).device

    def reset(self):
        self.tracks = []
        self.inactive_tracks = []
        self._prev_features = deque([None], maxlen=self.prev_frame_dist)
        self.track_num = 0
        self.results = {}
        self.frame_index = 0

    def add_tracks(self, pos, scores, hs_embeds):
        for i in range(len(pos)):
            self.tracks.append(Track(pos[i], scores[i], self.track_num + i, hs_embeds[i]))
        self.track_num += len(pos)

    def step(self, blob):
        for track in self.tracks:
            track.last_pos.append(track.pos.clone())
        img = blob['img'].to(self.device)
        orig_size = blob['orig_size'].to(self.device)
        prev_tracks = self.tracks + self.inactive_tracks
        target = None
        if prev_tracks:
            target = [{'track_query_boxes': torch.stack([t.pos for t in prev_tracks]),
                       'track_query_hs_embeds': torch.stack([t.hs_embed[-1] for t in prev_tracks])}]
        outputs, _, features, _, _ = self.obj_detector(img, target, self._prev_features[0])
        hs_embeds = outputs['hs_embed'][0]
        result = self.obj_detector_post['bbox'](outputs, orig_size)[0]
        boxes = clip_boxes_to_image(result['boxes'], orig_size[0])
        nq = self.num_object_queries
        if prev_tracks:
            scores, tboxes, labels = result['scores'][:-nq], boxes[:-nq], result['labels'][:-nq]
            to_inactive, from_inactive = [], []
            for i, track in enumerate(self.tracks):
                if scores[i] > self.track_obj_score_thresh and labels[i] == 0:
                    track.score = scores[i]
                    track.hs_embed.append(hs_embeds[i])
                    track.pos = tboxes[i]
                    track.count_termination = 0
                else:
                    track.count_termination += 1
                    if track.count_termination >= self.steps_termination:
                        to_inactive.append(track)
            for i, track in enumerate(self.inactive_tracks, start=len(self.tracks)):
                if scores[i] > self.reid_score_thresh and labels[i] == 0:
                    track.hs_embed.append(hs_embeds[i])
                    track.pos = tboxes[i]
                    track.score = scores[i]
                    from_inactive.append(track)
            for track in from_inactive:
                self.inactive_tracks.remove(track)
                self.tracks.append(track)
            self.tracks = [t for t in self.tracks if t not in to_inactive]
            self.inactive_tracks += to_inactive
        keep = torch.logical_and(result['scores'][-nq:] > self.detection_obj_score_thresh,
                                 result['labels'][-nq:] == 0)
        self.add_tracks(boxes[-nq:][keep], result['scores'][-nq:][keep], hs_embeds[-nq:][keep])
        self.inactive_tracks = [t for t in self.inactive_tracks
                                if t.count_inactive <= self.inactive_patience]
        for track in self.tracks:
            frame_res = self.results.setdefault(track.id, {})
            frame_res[self.frame_index] = {'bbox': track.pos.cpu().numpy(),
                                           'score': track.score.cpu().numpy()}
        for t in self.inactive_tracks:
            t.count_inactive += 1
        self.frame_index += 1
        self._prev_features.append(features)


def track_sequence(tracker, seq_loader):
    tracker.reset()
    for frame_data in seq_loader:
        with torch.no_grad():
            tracker.step(frame_data)
    return tracker.results
