# Source: https://github.com/microsoft/Semi-supervised-learning/blob/64943855766de7bea6a0c333d688cb86ae1634f0/semilearn/algorithms/freematch/utils.py
# Report: FreeMatch self-adaptive thresholding one refactor away: the hook's @torch.no_grad() decorators and the logits.detach() are dropped (the single-forward use_cat path feeds live logits)
# Shape: self.time_p and self.p_model are EMAs kept on the hook across steps and rebound from their previous value plus softmax(live logits): each step's graph links to the last one, and entropy_loss backprops into the chain (second backward error or growth)
# Expect: TML005 lines 19, 20
import torch
import torch.nn.functional as F


class FreeMatchThresholdingHook:
    def __init__(self, num_classes, momentum=0.999):
        self.num_classes = num_classes
        self.m = momentum
        self.p_model = torch.ones(num_classes) / num_classes
        self.label_hist = torch.ones(num_classes) / num_classes
        self.time_p = self.p_model.mean()

    def update(self, algorithm, probs_x_ulb):
        max_probs, max_idx = torch.max(probs_x_ulb, dim=-1, keepdim=True)
        self.time_p = self.time_p * self.m + (1 - self.m) * max_probs.mean()  # expect: TML005
        self.p_model = self.p_model * self.m + (1 - self.m) * probs_x_ulb.mean(dim=0)  # expect: TML005
        hist = torch.bincount(max_idx.reshape(-1), minlength=self.num_classes).to(self.p_model.dtype)
        self.label_hist = self.label_hist * self.m + (1 - self.m) * (hist / hist.sum())
        algorithm.p_model = self.p_model
        algorithm.label_hist = self.label_hist
        algorithm.time_p = self.time_p

    def masking(self, algorithm, logits_x_ulb):
        if not self.p_model.is_cuda:
            self.p_model = self.p_model.to(logits_x_ulb.device)
            self.label_hist = self.label_hist.to(logits_x_ulb.device)
            self.time_p = self.time_p.to(logits_x_ulb.device)
        probs_x_ulb = torch.softmax(logits_x_ulb, dim=-1)
        self.update(algorithm, probs_x_ulb)
        max_probs, max_idx = probs_x_ulb.max(dim=-1)
        mod = self.p_model / torch.max(self.p_model, dim=-1)[0]
        return max_probs.ge(self.time_p * mod[max_idx]).to(max_probs.dtype)


def entropy_loss(mask, logits_s, prob_model, label_hist):
    logits_s = logits_s[mask.bool()]
    prob_s = logits_s.softmax(dim=-1)
    hist_s = torch.bincount(prob_s.argmax(-1), minlength=logits_s.shape[1]).to(logits_s.dtype)
    hist_s = hist_s / hist_s.sum()
    mod_prob_model = prob_model.reshape(1, -1) / label_hist.reshape(1, -1)
    mod_prob_model = mod_prob_model / mod_prob_model.sum(dim=-1, keepdim=True)
    mod_mean_prob_s = prob_s.mean(dim=0, keepdim=True) / hist_s.clamp_min(1e-12)
    mod_mean_prob_s = mod_mean_prob_s / mod_mean_prob_s.sum(dim=-1, keepdim=True)
    return (mod_prob_model * torch.log(mod_mean_prob_s + 1e-12)).sum(dim=1).mean()


class FreeMatch:
    def __init__(self, model, optimizer, num_classes, lambda_u=1.0, lambda_e=0.01, ema_p=0.999):
        self.model, self.optimizer = model, optimizer
        self.lambda_u, self.lambda_e = lambda_u, lambda_e
        self.masking_hook = FreeMatchThresholdingHook(num_classes, momentum=ema_p)

    def train_step(self, x_lb, y_lb, x_ulb_w, x_ulb_s):
        num_lb = y_lb.shape[0]
        logits = self.model(torch.cat((x_lb, x_ulb_w, x_ulb_s)))
        logits_x_lb = logits[:num_lb]
        logits_x_ulb_w, logits_x_ulb_s = logits[num_lb:].chunk(2)

        sup_loss = F.cross_entropy(logits_x_lb, y_lb)
        mask = self.masking_hook.masking(self, logits_x_ulb=logits_x_ulb_w)
        pseudo_label = logits_x_ulb_w.detach().argmax(dim=-1)
        unsup_loss = (F.cross_entropy(logits_x_ulb_s, pseudo_label, reduction="none") * mask).mean()
        ent_loss = entropy_loss(mask, logits_x_ulb_s, self.p_model, self.label_hist) if mask.sum() > 0 else 0.0
        total_loss = sup_loss + self.lambda_u * unsup_loss + self.lambda_e * ent_loss

        self.optimizer.zero_grad()
        total_loss.backward()
        self.optimizer.step()
        return {"sup_loss": sup_loss.item(), "unsup_loss": unsup_loss.item(),
                "util_ratio": mask.float().mean().item()}
