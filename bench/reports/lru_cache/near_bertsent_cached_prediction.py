# Source: https://github.com/abhishekkrthakur/bert-sentiment/blob/master/src/app.py
# Report: Flask sentiment API around a fine-tuned BERT memoises sentence_prediction() (the repository uses a dict / joblib memo); here functools.lru_cache, with the function returning a plain Python float as the repository's returns a numpy scalar
# Shape: the cached function takes a string and returns float(...) of the probability computed under no_grad, so the cache holds only strings and floats; the tensors die when the call returns
# Expect: near-miss: must be silent
import functools
import time

import flask
import torch
import torch.nn as nn
import transformers
from flask import Flask, request

DEVICE = "cuda"
MAX_LEN = 512
TOKENIZER = transformers.BertTokenizer.from_pretrained("bert-base-uncased", do_lower_case=True)

app = Flask(__name__)
MODEL = None


class BertBaseUncased(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = transformers.BertModel.from_pretrained("bert-base-uncased")
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(768, 1)

    def forward(self, ids, mask, token_type_ids):
        pooled = self.bert(ids, attention_mask=mask, token_type_ids=token_type_ids).pooler_output
        return self.out(self.drop(pooled))


def encode(sentence):
    review = " ".join(str(sentence).split())
    enc = TOKENIZER.encode_plus(review, None, add_special_tokens=True,
                                max_length=MAX_LEN, truncation=True)
    pad = MAX_LEN - len(enc["input_ids"])
    ids = enc["input_ids"] + [0] * pad
    mask = enc["attention_mask"] + [0] * pad
    token_type_ids = enc["token_type_ids"] + [0] * pad
    return [torch.tensor(x, dtype=torch.long).unsqueeze(0).to(DEVICE)
            for x in (ids, mask, token_type_ids)]


@functools.lru_cache(maxsize=1024)
def sentence_prediction(sentence):
    ids, mask, token_type_ids = encode(sentence)
    with torch.no_grad():
        outputs = MODEL(ids=ids, mask=mask, token_type_ids=token_type_ids)
    return float(torch.sigmoid(outputs)[0, 0].cpu())


@app.route("/predict")
def predict():
    sentence = request.args.get("sentence")
    start = time.time()
    positive = sentence_prediction(sentence)
    return flask.jsonify({"response": {
        "positive": str(positive),
        "negative": str(1 - positive),
        "sentence": str(sentence),
        "time_taken": str(time.time() - start),
    }})


if __name__ == "__main__":
    MODEL = BertBaseUncased()
    MODEL.load_state_dict(torch.load("model.bin", map_location=DEVICE))
    MODEL.to(DEVICE)
    MODEL.eval()
    app.run()
