# Source: https://github.com/alison-carrera/onn/pull/4
# Report: fixed version of the ONN hedge-weight leak: the alpha re-weighting runs under torch.no_grad(), so self.alpha never holds a graph
# Shape: same self.alpha rebinding from its previous value times b**loss, clamped and renormalised, inside a with torch.no_grad() block
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class OnlineHedgeNet:
    def __init__(self, n_features, n_layers, width, n_classes, b=0.99, lr=0.01, s=0.2, device="cuda"):
        self.device = torch.device(device)
        self.n_layers = n_layers
        self.n_classes = n_classes
        self.b = torch.tensor(b, device=self.device)
        self.lr = lr
        self.s = s
        hidden = [nn.Linear(n_features, width)] + [nn.Linear(width, width) for _ in range(n_layers - 1)]
        self.hidden_layers = nn.ModuleList(hidden).to(self.device)
        self.output_layers = nn.ModuleList([nn.Linear(width, n_classes) for _ in range(n_layers)]).to(self.device)
        self.alpha = torch.full((n_layers,), 1.0 / (n_layers + 1), device=self.device)
        self.loss_history = []

    def forward(self, X):
        h = torch.as_tensor(X, dtype=torch.float32, device=self.device)
        outs = []
        for hidden, head in zip(self.hidden_layers, self.output_layers):
            h = F.relu(hidden(h))
            outs.append(head(h))
        return torch.stack(outs)

    def zero_grad(self):
        for layer in list(self.hidden_layers) + list(self.output_layers):
            layer.weight.grad = None
            layer.bias.grad = None

    def update_weights(self, X, Y):
        Y = torch.as_tensor(Y, device=self.device).long()
        predictions_per_layer = self.forward(X)
        losses_per_layer = [F.cross_entropy(out, Y) for out in predictions_per_layer]

        w, b = [], []
        for i, loss in enumerate(losses_per_layer):
            loss.backward(retain_graph=i < len(losses_per_layer) - 1)
            head, hidden = self.output_layers[i], self.hidden_layers[i]
            head.weight.data -= self.lr * self.alpha[i] * head.weight.grad.data
            head.bias.data -= self.lr * self.alpha[i] * head.bias.grad.data
            w.append(self.alpha[i] * hidden.weight.grad.data)
            b.append(self.alpha[i] * hidden.bias.grad.data)
            self.zero_grad()

        for i in range(1, len(losses_per_layer)):
            self.hidden_layers[i].weight.data -= self.lr * sum(w[i:])
            self.hidden_layers[i].bias.data -= self.lr * sum(b[i:])

        with torch.no_grad():
            hedge = torch.pow(self.b, torch.stack(losses_per_layer))
            alpha = torch.clamp(self.alpha * hedge, min=self.s / self.n_layers)
            self.alpha = alpha / alpha.sum()

        self.loss_history.append(float(sum(l.item() for l in losses_per_layer)))

    def partial_fit(self, X, Y):
        self.update_weights(X, Y)


def run_stream(model, stream):
    for X, Y in stream:
        model.partial_fit(X, Y)
