# Source: https://github.com/frankaging/Quasi-Attention-ABSA/blob/cff520320c6673974f89999baae37310ad3c08f2/code/model/QACGBERT.py
# Report: audited correct idiom: QACGBERT registers its LRP/gradient-sensitivity forward hooks (classifier, embeddings, every encoder layer's self-attention) once, from the model constructor (init_lrp -> init_hooks_lrp(self)); the closures overwrite a module-level func_activations dict that backward_gradient reads
# Shape: leak variant: the sensitivity loop over the test set registers the classifier/embeddings/self-attention hooks on the persistent model for every batch and never keeps or removes the handles, so hooks and their closures pile up on the model
# Expect: TML007 line 54; TML007 line 55; TML007 line 57
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


class QACGBertForSequenceClassification(nn.Module):
    def __init__(self, bert, hidden_size, num_labels, dropout=0.1):
        super().__init__()
        self.bert = bert
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden_size, num_labels)

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
        model.classifier.register_forward_hook(get_activation("model.classifier"))  # expect: TML007
        model.bert.embeddings.register_forward_hook(get_activation("model.bert.embeddings"))  # expect: TML007
        for idx, layer in enumerate(model.bert.encoder.layer):
            layer.attention.self.register_forward_hook(  # expect: TML007
                get_activation_multi(f"model.bert.encoder.layer.{idx}.attention.self"))
        input_ids, input_mask, segment_ids, label_ids, context_ids = (t.to(device) for t in batch)
        logits = model(input_ids, segment_ids, input_mask, context_ids)
        sensitivity = torch.zeros_like(logits)
        sensitivity[torch.arange(logits.size(0)), logits.argmax(dim=-1)] = 1.0
        grads = model.backward_gradient(sensitivity)
        scores.append(grads.norm(dim=-1).detach().cpu())
    return scores
