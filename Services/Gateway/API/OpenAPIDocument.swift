import GatewayCore
/// The JSON API's contract, served at `/api/v1/openapi.json`: OpenAPI 3.1.
/// This is its one home; `APIRoutes` implements it, `OpenAPIDocumentTests`
/// checks that every route is in it and the other way round, and CI runs
/// schemathesis against the live stack with it (deploy/test.sh).
enum OpenAPIDocument {
    static let json = #"""
{
 "openapi": "3.1.0",
 "info": {
  "title": "GeoChat JSON API",
  "version": "1.0.0",
  "description": "Map-based chat rooms: the same rooms, messages, rules and limits as the phones' XML protocol (`/chat.php`), in JSON. Places are WGS 84 degrees (`latitude`, `longitude`) or normalized Mercator values (`x`, `y`, 0…1). Errors are `application/problem+json` (RFC 9457) with the protocol's `code`. See docs/api.md."
 },
 "servers": [
  {
   "url": "/api/v1"
  }
 ],
 "components": {
  "securitySchemes": {
   "session": {
    "type": "http",
    "scheme": "bearer",
    "description": "The `session` of `POST /sessions`."
   }
  },
  "headers": {
   "RetryAfter": {
    "description": "Seconds to wait before trying again.",
    "schema": {
     "type": "string",
     "pattern": "^[0-9]+$"
    }
   }
  },
  "parameters": {
   "room": {
    "name": "room",
    "in": "path",
    "required": true,
    "description": "A room id.",
    "schema": {
     "type": "integer",
     "format": "int64",
     "minimum": 1
    }
   },
   "minZoom": {
    "name": "minZoom",
    "in": "query",
    "description": "Lowest zoom level of the rooms (default 0).",
    "schema": {
     "type": "integer",
     "minimum": 0,
     "maximum": 17
    }
   },
   "maxZoom": {
    "name": "maxZoom",
    "in": "query",
    "description": "Highest zoom level of the rooms (default 17).",
    "schema": {
     "type": "integer",
     "minimum": 0,
     "maximum": 17
    }
   },
   "after": {
    "name": "after",
    "in": "query",
    "description": "Messages with ids above this one; 0 (the default): the latest.",
    "schema": {
     "type": "integer",
     "format": "int64",
     "minimum": 0
    }
   }
  },
  "schemas": {
   "Problem": {
    "type": "object",
    "required": [
     "type",
     "title",
     "status",
     "detail",
     "code"
    ],
    "properties": {
     "type": {
      "type": "string",
      "format": "uri",
      "examples": [
       "urn:geochat:problem:no_such_chat"
      ]
     },
     "title": {
      "type": "string"
     },
     "status": {
      "type": "integer"
     },
     "detail": {
      "type": "string"
     },
     "code": {
      "type": "string",
      "enum": [
       "missing_param",
       "bad_param",
       "invalid_nick",
       "empty",
       "too_long",
       "unknown_command",
       "unsupported_version",
       "invalid_session",
       "banned",
       "no_such_chat",
       "too_large",
       "rate_limited",
       "unavailable"
      ]
     }
    }
   },
   "Nick": {
    "type": "string",
    "pattern": "^[A-Za-z][A-Za-z0-9_]{0,31}$"
   },
   "Session": {
    "type": "object",
    "required": [
     "session",
     "nick"
    ],
    "properties": {
     "session": {
      "type": "string"
     },
     "nick": {
      "$ref": "#/components/schemas/Nick"
     }
    }
   },
   "Room": {
    "type": "object",
    "required": [
     "id",
     "topic",
     "zoom",
     "latitude",
     "longitude",
     "x",
     "y"
    ],
    "properties": {
     "id": {
      "type": "integer",
      "format": "int64",
      "minimum": 1
     },
     "topic": {
      "type": "string"
     },
     "zoom": {
      "type": "integer",
      "minimum": 0,
      "maximum": 17
     },
     "latitude": {
      "type": "number",
      "minimum": -85.06,
      "maximum": 85.06
     },
     "longitude": {
      "type": "number",
      "minimum": -180,
      "maximum": 180
     },
     "x": {
      "type": "number",
      "minimum": 0,
      "maximum": 1
     },
     "y": {
      "type": "number",
      "minimum": 0,
      "maximum": 1
     }
    }
   },
   "Rooms": {
    "type": "object",
    "required": [
     "rooms"
    ],
    "properties": {
     "rooms": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Room"
      }
     }
    }
   },
   "NearbyRoom": {
    "type": "object",
    "required": [
     "room",
     "distance",
     "bearing"
    ],
    "properties": {
     "room": {
      "$ref": "#/components/schemas/Room"
     },
     "distance": {
      "type": "number",
      "minimum": 0,
      "description": "Great-circle metres from the point."
     },
     "bearing": {
      "type": "number",
      "minimum": 0,
      "maximum": 360,
      "description": "Degrees clockwise from north, from the point to the room."
     }
    }
   },
   "NearbyRooms": {
    "type": "object",
    "required": [
     "rooms"
    ],
    "properties": {
     "rooms": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/NearbyRoom"
      }
     }
    }
   },
   "Message": {
    "type": "object",
    "required": [
     "id",
     "room",
     "nick",
     "text",
     "addedAt"
    ],
    "properties": {
     "id": {
      "type": "integer",
      "format": "int64",
      "minimum": 1
     },
     "room": {
      "type": "integer",
      "format": "int64"
     },
     "nick": {
      "type": "string"
     },
     "text": {
      "type": "string"
     },
     "addedAt": {
      "type": "string",
      "format": "date-time"
     }
    }
   },
   "Messages": {
    "type": "object",
    "required": [
     "room",
     "messages"
    ],
    "properties": {
     "room": {
      "type": "integer",
      "format": "int64"
     },
     "messages": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Message"
      }
     }
    }
   },
   "Transcript": {
    "type": "object",
    "required": [
     "room",
     "messages",
     "next"
    ],
    "properties": {
     "room": {
      "type": "integer",
      "format": "int64"
     },
     "messages": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Message"
      }
     },
     "next": {
      "type": [
       "integer",
       "null"
      ],
      "format": "int64",
      "description": "The `after` of the next page; null on the last."
     }
    }
   },
   "Participants": {
    "type": "object",
    "required": [
     "room",
     "participants"
    ],
    "properties": {
     "room": {
      "type": "integer",
      "format": "int64"
     },
     "participants": {
      "type": "array",
      "items": {
       "type": "string"
      }
     }
    }
   },
   "NickBody": {
    "type": "object",
    "required": [
     "nick"
    ],
    "properties": {
     "nick": {
      "$ref": "#/components/schemas/Nick"
     }
    }
   },
   "NewRoom": {
    "type": "object",
    "required": [
     "zoom",
     "topic"
    ],
    "description": "A place as `latitude` and `longitude`, or as `x` and `y`.",
    "properties": {
     "latitude": {
      "type": "number",
      "minimum": -85.0511,
      "maximum": 85.0511
     },
     "longitude": {
      "type": "number",
      "minimum": -180,
      "maximum": 180
     },
     "x": {
      "type": "number",
      "minimum": 0,
      "maximum": 1
     },
     "y": {
      "type": "number",
      "minimum": 0,
      "maximum": 1
     },
     "zoom": {
      "type": "integer",
      "minimum": 0,
      "maximum": 17
     },
     "topic": {
      "type": "string",
      "minLength": 1,
      "maxLength": 100
     }
    },
    "oneOf": [
     {
      "required": [
       "latitude",
       "longitude"
      ]
     },
     {
      "required": [
       "x",
       "y"
      ]
     }
    ]
   },
   "NewMessage": {
    "type": "object",
    "required": [
     "text"
    ],
    "properties": {
     "text": {
      "type": "string",
      "minLength": 1,
      "maxLength": 500
     }
    }
   }
  }
 },
 "paths": {
  "/openapi.json": {
   "get": {
    "operationId": "openapi",
    "summary": "This document.",
    "responses": {
     "200": {
      "description": "The OpenAPI 3.1 document.",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     }
    }
   }
  },
  "/sessions": {
   "post": {
    "operationId": "startSession",
    "summary": "Start a session under a nickname.",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/NickBody"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "The new session; send it as `Authorization: Bearer <session>`.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Session"
        }
       }
      }
     },
     "403": {
      "description": "The nickname is banned.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/session": {
   "patch": {
    "operationId": "renameSession",
    "summary": "Change the session's nickname.",
    "security": [
     {
      "session": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/NickBody"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "The renamed session.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Session"
        }
       }
      }
     },
     "401": {
      "description": "No session, or it is unknown or has ended.",
      "headers": {
       "WWW-Authenticate": {
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "The nickname is banned.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   },
   "delete": {
    "operationId": "endSession",
    "summary": "End the session (leaves every room).",
    "security": [
     {
      "session": []
     }
    ],
    "responses": {
     "204": {
      "description": "Ended."
     },
     "401": {
      "description": "No session, or it is unknown or has ended.",
      "headers": {
       "WWW-Authenticate": {
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "The nickname is banned.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/rooms": {
   "get": {
    "operationId": "roomsInBox",
    "summary": "Rooms in a box and zoom range: at most the room cap (500), the most recently visited when more match.",
    "parameters": [
     {
      "name": "south",
      "in": "query",
      "required": true,
      "schema": {
       "type": "number",
       "minimum": -90,
       "maximum": 90
      },
      "description": "Degrees; beyond ±85.0511 is the map's edge. Or give `x1`, `y1`, `x2`, `y2` instead of all four."
     },
     {
      "name": "west",
      "in": "query",
      "required": true,
      "schema": {
       "type": "number",
       "minimum": -180,
       "maximum": 180
      }
     },
     {
      "name": "north",
      "in": "query",
      "required": true,
      "schema": {
       "type": "number",
       "minimum": -90,
       "maximum": 90
      }
     },
     {
      "name": "east",
      "in": "query",
      "required": true,
      "schema": {
       "type": "number",
       "minimum": -180,
       "maximum": 180
      }
     },
     {
      "$ref": "#/components/parameters/minZoom"
     },
     {
      "$ref": "#/components/parameters/maxZoom"
     }
    ],
    "responses": {
     "200": {
      "description": "The rooms, by id.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Rooms"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   },
   "post": {
    "operationId": "createRoom",
    "summary": "Create a room at a place and zoom level (a repeat within 10 s answers the same room).",
    "security": [
     {
      "session": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/NewRoom"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "The room.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Room"
        }
       }
      }
     },
     "401": {
      "description": "No session, or it is unknown or has ended.",
      "headers": {
       "WWW-Authenticate": {
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "The nickname is banned.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/rooms/nearest": {
   "get": {
    "operationId": "nearestRooms",
    "summary": "The rooms nearest a point within a radius, nearest first; optionally only in a direction (a field of view) or inside an ellipse.",
    "parameters": [
     {
      "name": "latitude",
      "in": "query",
      "required": true,
      "schema": {
       "type": "number",
       "minimum": -85.0511,
       "maximum": 85.0511
      },
      "description": "Or `x` and `y` instead of `latitude` and `longitude`."
     },
     {
      "name": "longitude",
      "in": "query",
      "required": true,
      "schema": {
       "type": "number",
       "minimum": -180,
       "maximum": 180
      }
     },
     {
      "name": "radius",
      "in": "query",
      "schema": {
       "type": "number",
       "exclusiveMinimum": 0,
       "maximum": 20037509
      },
      "description": "Metres (default 1000)."
     },
     {
      "name": "limit",
      "in": "query",
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 100
      },
      "description": "Most rooms answered (default 10)."
     },
     {
      "$ref": "#/components/parameters/minZoom"
     },
     {
      "$ref": "#/components/parameters/maxZoom"
     },
     {
      "name": "direction",
      "in": "query",
      "schema": {
       "type": "number",
       "minimum": 0,
       "maximum": 360
      },
      "description": "With `fieldOfView`: only rooms within half the field of view of this bearing (degrees clockwise from north)."
     },
     {
      "name": "fieldOfView",
      "in": "query",
      "schema": {
       "type": "number",
       "exclusiveMinimum": 0,
       "maximum": 360
      }
     },
     {
      "name": "semiMajor",
      "in": "query",
      "schema": {
       "type": "number",
       "exclusiveMinimum": 0,
       "maximum": 20037509
      },
      "description": "With `semiMinor` (and `orientation`): only rooms inside this ellipse (metres), instead of the radius."
     },
     {
      "name": "semiMinor",
      "in": "query",
      "schema": {
       "type": "number",
       "exclusiveMinimum": 0,
       "maximum": 20037509
      }
     },
     {
      "name": "orientation",
      "in": "query",
      "schema": {
       "type": "number",
       "minimum": 0,
       "maximum": 360
      },
      "description": "The major axis, degrees clockwise from north (default 0)."
     }
    ],
    "responses": {
     "200": {
      "description": "The rooms, nearest first.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/NearbyRooms"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/rooms/{room}": {
   "get": {
    "operationId": "room",
    "summary": "One room.",
    "parameters": [
     {
      "$ref": "#/components/parameters/room"
     }
    ],
    "responses": {
     "200": {
      "description": "The room.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Room"
        }
       }
      }
     },
     "404": {
      "description": "No such chat room.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/rooms/{room}/join": {
   "post": {
    "operationId": "joinRoom",
    "summary": "Join a room.",
    "security": [
     {
      "session": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/room"
     }
    ],
    "responses": {
     "204": {
      "description": "Joined."
     },
     "401": {
      "description": "No session, or it is unknown or has ended.",
      "headers": {
       "WWW-Authenticate": {
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "The nickname is banned.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "No such chat room.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/rooms/{room}/leave": {
   "post": {
    "operationId": "leaveRoom",
    "summary": "Leave a room.",
    "security": [
     {
      "session": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/room"
     }
    ],
    "responses": {
     "204": {
      "description": "Left (or was not a member)."
     },
     "401": {
      "description": "No session, or it is unknown or has ended.",
      "headers": {
       "WWW-Authenticate": {
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "The nickname is banned.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "No such chat room.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/rooms/{room}/messages": {
   "get": {
    "operationId": "messages",
    "summary": "Messages after an id, oldest first; `wait` makes an empty answer wait for the next message (a long poll).",
    "parameters": [
     {
      "$ref": "#/components/parameters/room"
     },
     {
      "$ref": "#/components/parameters/after"
     },
     {
      "name": "limit",
      "in": "query",
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 200
      },
      "description": "Default 50."
     },
     {
      "name": "wait",
      "in": "query",
      "schema": {
       "type": "integer",
       "minimum": 0,
       "maximum": 25
      },
      "description": "Seconds to wait for a message when none is newer than `after` (default 0)."
     }
    ],
    "responses": {
     "200": {
      "description": "The messages.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Messages"
        }
       }
      }
     },
     "401": {
      "description": "No session, or it is unknown or has ended.",
      "headers": {
       "WWW-Authenticate": {
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "The nickname is banned.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "No such chat room.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   },
   "post": {
    "operationId": "say",
    "summary": "Say something in a room (joins it). A repeat within 15 s answers the first message.",
    "security": [
     {
      "session": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/room"
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/NewMessage"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "The stored message.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Message"
        }
       }
      }
     },
     "401": {
      "description": "No session, or it is unknown or has ended.",
      "headers": {
       "WWW-Authenticate": {
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "The nickname is banned.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "No such chat room.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/rooms/{room}/participants": {
   "get": {
    "operationId": "participants",
    "summary": "The nicknames present in a room.",
    "parameters": [
     {
      "$ref": "#/components/parameters/room"
     }
    ],
    "responses": {
     "200": {
      "description": "Present participants.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Participants"
        }
       }
      }
     },
     "401": {
      "description": "No session, or it is unknown or has ended.",
      "headers": {
       "WWW-Authenticate": {
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "The nickname is banned.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "No such chat room.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/rooms/{room}/transcript": {
   "get": {
    "operationId": "transcript",
    "summary": "A page of the room's transcript, from its first message: JSON, or text with `format=text` (or `Accept: text/plain`).",
    "parameters": [
     {
      "$ref": "#/components/parameters/room"
     },
     {
      "name": "after",
      "in": "query",
      "schema": {
       "type": "integer",
       "format": "int64",
       "minimum": 0
      },
      "description": "The page after this message id (0, the default: from the first)."
     },
     {
      "name": "limit",
      "in": "query",
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 200
      },
      "description": "Default 200."
     },
     {
      "name": "format",
      "in": "query",
      "schema": {
       "type": "string",
       "enum": [
        "json",
        "text"
       ]
      }
     }
    ],
    "responses": {
     "200": {
      "description": "The page. Text: one line a message, `2026-11-24T12:00:00Z <nick> text`; a `Link` header names the next page.",
      "headers": {
       "Link": {
        "schema": {
         "type": "string"
        },
        "description": "`<…>; rel=\"next\"` (text only, when there is a next page)."
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Transcript"
        }
       },
       "text/plain": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "404": {
      "description": "No such chat room.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/rooms/{room}/events": {
   "get": {
    "operationId": "events",
    "summary": "Push: the room's new messages (`event: message`, `id:` the message id) and participant lists (`event: participants`) as Server-Sent Events. Resumes after `Last-Event-ID` or `after`; without either, starts with the latest messages. `event: gone` when the room is removed.",
    "parameters": [
     {
      "$ref": "#/components/parameters/room"
     },
     {
      "$ref": "#/components/parameters/after"
     },
     {
      "name": "Last-Event-ID",
      "in": "header",
      "schema": {
       "type": "string",
       "pattern": "^[0-9]{1,18}$"
      }
     }
    ],
    "responses": {
     "200": {
      "description": "The stream (it stays open).",
      "content": {
       "text/event-stream": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "404": {
      "description": "No such chat room.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "400": {
      "description": "A parameter or the body is missing or not valid (`missing_param`, `bad_param`, `invalid_nick`, `empty`, `too_long`).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "The query or body is too large.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "Too many requests; `Retry-After` says when to come back.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "A service did not answer in time; try again.",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  }
 }
}
"""#
}
