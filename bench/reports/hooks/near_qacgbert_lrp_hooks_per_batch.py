# Source: https://github.com/frankaging/Quasi-Attention-ABSA/blob/cff520320c6673974f89999baae37310ad3c08f2/code/model/QACGBERT.py
# Report: audited correct idiom: QACGBERT registers its LRP/gradient-sensitivity forward hooks once, from the model constructor (init_lrp -> init_hooks_lrp(self)); the closures overwrite a module-level func_activations dict that backward_gradient reads
# Shape: as in the repository: init_hooks_lrp loops over the encoder layers once at construction time (a setup loop over modules, not a per-batch loop); the per-batch sensitivity loop registers nothing and the hook closures only overwrite one entry per layer
# Expect: near-miss: must be silent
import collections

import torch
import torch.nn as nn
from tqdm import tqdm

func_inputs = collections.defaultdict(list)
func_activations = collections.defaultdict(list)


def get_inputivation(name):
    def hook(module, input, output):
        func_inputs[name] = [_in for _in in input]
    return hook


def get_activation(name):
    def hook(module, input, output):
        func_activations[name] = output
    return hook


def get_activation_multi(name):
    def hook(module, input, output):
        func_activations[name] = [_out for _out in output]
    return hook


def init_hooks_lrp(model):
    model.classifier.register_forward_hook(get_inputivation("model.classifier"))
    model.classifier.register_forward_hook(get_activation("model.classifier"))
    model.bert.embeddings.register_forward_hook(get_activation("model.bert.embeddings"))
    for idx, module_layer in enumerate(model.bert.encoder.layer):
        layer_name_self = f"model.bert.encoder.layer.{idx}.attention.self"
        module_layer.attention.self.register_forward_hook(get_activation_multi(layer_name_self))


class QACGBertForSequenceClassification(nn.Module):
    def __init__(self, bert, hidden_size, num_labels, dropout=0.1, init_lrp=False):
        super().__init__()
        self.bert = bert
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden_size, num_labels)
        if init_lrp:
            init_hooks_lrp(self)

    def forward(self, input_ids, token_type_ids, attention_mask, context_ids=None):
        pooled_output = self.bert(input_ids, token_type_ids, attention_mask, context_ids)
        return self.classifier(self.dropout(pooled_output))

    def backward_gradient(self, sensitivity_grads):
        classifier_out = func_activations["model.classifier"]
        embedding_output = func_activations["model.bert.embeddings"]
        return torch.autograd.grad(classifier_out, embedding_output,
                                   grad_outputs=sensitivity_grads)[0]


def gradient_sensitivity(model, test_dataloader, device):
    scores = []
    for batch in tqdm(test_dataloader, desc="sensitivity"):
        input_ids, input_mask, segment_ids, label_ids, context_ids = (t.to(device) for t in batch)
        logits = model(input_ids, segment_ids, input_mask, context_ids)
        sensitivity = torch.zeros_like(logits)
        sensitivity[torch.arange(logits.size(0)), logits.argmax(dim=-1)] = 1.0
        grads = model.backward_gradient(sensitivity)
        scores.append(grads.norm(dim=-1).detach().cpu())
    return scores
