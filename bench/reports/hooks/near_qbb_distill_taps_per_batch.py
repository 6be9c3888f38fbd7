# Source: https://github.com/luboyang-a/qbb/blob/2efe61a90ff50ebc1c65faf772966d67302a1a7a/calibrate_qbb.py
# Report: audit of a QBB student/teacher calibrator: FeatureHook objects on every decoder layer are set up once before the epoch loop, their .features cleared after each step and the handles removed at the end (correct as written)
# Shape: as in the repository: _attach_taps() registers one hook per layer and keeps the handles, it is called once before the loops, taps are cleared after every step and _detach_taps() removes every handle at the end
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from tqdm import tqdm


class FeatureTap:
    """Callable forward hook that remembers the most recent layer output."""

    def __init__(self):
        self.features = None

    def __call__(self, module, inputs, output):
        self.features = output[0] if isinstance(output, tuple) else output


class LayerwiseDistiller:
    def __init__(self, student, teacher, feat_weight=1.0, logit_weight=1.0, device="cuda"):
        self.device = torch.device(device)
        self.student = student.to(self.device)
        self.teacher = teacher.to(self.device).eval()
        self.feat_weight = feat_weight
        self.logit_weight = logit_weight
        self.s_taps, self.t_taps = [], []
        self.handles = []

    def _attach_taps(self):
        for s_layer, t_layer in zip(self.student.model.layers, self.teacher.model.layers):
            s_tap, t_tap = FeatureTap(), FeatureTap()
            self.handles.append(s_layer.register_forward_hook(s_tap))
            self.handles.append(t_layer.register_forward_hook(t_tap))
            self.s_taps.append(s_tap)
            self.t_taps.append(t_tap)

    def _detach_taps(self):
        for handle in self.handles:
            handle.remove()
        self.handles, self.s_taps, self.t_taps = [], [], []

    def feature_loss(self):
        total = 0.0
        for s_tap, t_tap in zip(self.s_taps, self.t_taps):
            if s_tap.features is not None and t_tap.features is not None:
                total = total + F.mse_loss(s_tap.features, t_tap.features)
        return total

    def calibrate(self, calib_batches, epochs=3, lr=1e-4):
        params = [p for n, p in self.student.named_parameters() if "alphas" in n]
        optimizer = torch.optim.Adam(params, lr=lr, eps=1e-6)
        history = []
        self._attach_taps()
        for epoch in range(epochs):
            self.student.train()
            running = 0.0
            bar = tqdm(calib_batches, desc=f"epoch {epoch + 1}")
            for batch in bar:
                batch = batch.to(self.device)
                with torch.no_grad():
                    t_out = self.teacher(batch)
                s_out = self.student(batch)
                l_logit = F.mse_loss(s_out.logits, t_out.logits)
                loss = self.logit_weight * l_logit + self.feat_weight * self.feature_loss()
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, max_norm=0.1)
                optimizer.step()
                running += loss.item()
                bar.set_postfix(loss=f"{loss.item():.4f}")
                for tap in self.s_taps + self.t_taps:
                    tap.features = None
            history.append(running / max(len(calib_batches), 1))
        self._detach_taps()
        return history
