# Source: https://github.com/ssyounge/ASIB/blob/c3e910fcd52a2430d98c0c789074a1ab1dd0e2c5/methods/feature_kd.py
# Report: audited FeatureKD distiller (methods/feature_kd.py + utils/feature_hook.py): FeatHook registers forward hooks on backbone stages once before the epoch loop, the hook lambdas store stage outputs in a dict, clear() runs every step and close() removes the handles at the end
# Shape: this rewrite registers the stage hooks inside the batch loop and keeps no handle; every step adds another hook to the same student and teacher stages, each closure keeping its own features dict (the student one with graph-attached stage outputs), so hooks and their dicts pile up
# Expect: TML007 line 47; TML007 line 48
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm.auto import tqdm


def _get_block(net: nn.Module, k: int) -> nn.Module:
    if hasattr(net, "features"):
        return net.features[k]
    if hasattr(net, f"layer{k+1}"):
        return getattr(net, f"layer{k+1}")
    return [m for m in net.children() if isinstance(m, nn.Sequential)][k]


def feat_mse(feats_s, feats_t, layer_ids, weights):
    return sum(w * F.mse_loss(feats_s[i], feats_t[i]) for i, w in zip(layer_ids, weights))


class FeatureKD:
    def __init__(self, teacher_model, student_model, alpha=1.0, temperature=4.0, config=None):
        self.teacher = teacher_model
        self.student = student_model
        self.alpha = float(alpha)
        self.temperature = float(temperature)
        self.cfg = config or {}

    def train_distillation(self, train_loader, epochs=1, lr=5e-4, device="cuda"):
        cfg = self.cfg
        self.teacher.to(device).eval()
        self.student.to(device)
        optimizer = torch.optim.AdamW(self.student.parameters(), lr=float(lr), weight_decay=5e-4)
        layer_ids = cfg.get("feat_layers", [1, 2])
        layer_w = cfg.get("feat_weights", [0.5, 0.5])
        gamma_feat = cfg.get("feat_loss_weight", 1.0)

        for ep in range(epochs):
            self.student.train()
            running, count = 0.0, 0
            for x, y in tqdm(train_loader, desc=f"[FeatureKD] epoch {ep+1}", leave=False):
                x, y = x.to(device), y.to(device)
                feats_s, feats_t = {}, {}
                for i in layer_ids:
                    _get_block(self.student.backbone, i).register_forward_hook(lambda m, inp, out, idx=i: feats_s.__setitem__(idx, out))  # expect: TML007
                    _get_block(self.teacher.backbone, i).register_forward_hook(lambda m, inp, out, idx=i: feats_t.__setitem__(idx, out.detach()))  # expect: TML007
                with torch.no_grad():
                    t_logits = self.teacher(x)
                optimizer.zero_grad()
                s_logits = self.student(x)
                ce = F.cross_entropy(s_logits, y)
                kd = F.kl_div(F.log_softmax(s_logits / self.temperature, 1),
                              F.softmax(t_logits / self.temperature, 1), reduction="batchmean")
                loss = (1 - self.alpha) * ce + self.alpha * kd + gamma_feat * feat_mse(feats_s, feats_t, layer_ids, layer_w)
                loss.backward()
                optimizer.step()
                running += loss.item() * x.size(0)
                count += x.size(0)
            print(f"[FeatureKD] ep {ep+1:03d}/{epochs} loss {running / max(count, 1):.4f}")
        return running / max(count, 1)
